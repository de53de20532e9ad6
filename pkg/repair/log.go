package repair

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// Logger writes the watchdog's structured lines: logfmt, or one JSON object per line. Every
// line has time, level and msg first, then the fields in the order given. The message and every
// value go through the redactor, whoever calls: an error from the API or a pod's status can echo
// a credential, and the log is kept by the cluster's log collection.
type Logger struct {
	mu     sync.Mutex
	w      io.Writer
	json   bool
	now    func() time.Time
	redact *redact.Redactor
}

// NewLogger logs to w; format is "json" or anything else for logfmt.
func NewLogger(w io.Writer, format string, now func() time.Time) *Logger {
	if now == nil {
		now = time.Now
	}
	return &Logger{w: w, json: format == "json", now: now, redact: redact.New()}
}

// Know adds secret values (those of the specs the watchdog watches) to what the log redacts
// wherever they appear.
func (l *Logger) Know(set redact.Set) {
	if l != nil {
		l.redact.Know(set)
	}
}

// Line writes one line; kv alternates keys and values.
func (l *Logger) Line(level, msg string, kv ...any) {
	if l == nil {
		return
	}
	ts := l.now().UTC().Format(time.RFC3339Nano)
	msg = l.redact.String(msg)
	kv = append([]any(nil), kv...)
	for i := 1; i < len(kv); i += 2 {
		kv[i] = l.redact.String(fmt.Sprint(kv[i]))
	}
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
