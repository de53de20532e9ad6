package repair

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Logger writes the watchdog's structured lines: logfmt, or one JSON object per line. Every
// line has time, level and msg first, then the fields in the order given.
type Logger struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	now  func() time.Time
}

// NewLogger logs to w; format is "json" or anything else for logfmt.
func NewLogger(w io.Writer, format string, now func() time.Time) *Logger {
	if now == nil {
		now = time.Now
	}
	return &Logger{w: w, json: format == "json", now: now}
}

// Line writes one line; kv alternates keys and values.
func (l *Logger) Line(level, msg string, kv ...any) {
	if l == nil {
		return
	}
	ts := l.now().UTC().Format(time.RFC3339Nano)
	var b strings.Builder
	if l.json {
		b.WriteString(`{"time":` + quoteJSON(ts) + `,"level":` + quoteJSON(level) + `,"msg":` + quoteJSON(msg))
		for i := 0; i+1 < len(kv); i += 2 {
			b.WriteString("," + quoteJSON(fmt.Sprint(kv[i])) + ":" + quoteJSON(fmt.Sprint(kv[i+1])))
		}
		b.WriteString("}\n")
	} else {
		b.WriteString("time=" + ts + " level=" + level + " msg=" + logfmtValue(msg))
		for i := 0; i+1 < len(kv); i += 2 {
			b.WriteString(" " + fmt.Sprint(kv[i]) + "=" + logfmtValue(fmt.Sprint(kv[i+1])))
		}
		b.WriteString("\n")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, b.String())
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func logfmtValue(s string) string {
	if s == "" {
		return `""`
	}
	if strings.ContainsAny(s, " =\"\t\n") {
		return strconv.Quote(s)
	}
	return s
}
