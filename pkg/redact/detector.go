package redact

import (
	"bytes"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// The provider formats (cloud keys, GitHub, Hugging Face, Slack and some two hundred more
// tokens, JWTs, curl's auth headers) come from gitleaks' default rule set, run as a library:
// a maintained list beats our own regular expressions. Loading it costs about 50-70 ms (it
// compiles every rule), so it is loaded once, on first use, and Warm starts that early.
//
// gitleaks' own per-call work (about 8 µs, whether or not a keyword matches) is too much for
// every line of a bundle, so a line reaches it only when it holds one of the rules' keywords,
// found by one Aho-Corasick pass over the whole text: every default rule but one (pkcs12-file,
// which matches file paths) has keywords, and gitleaks itself skips a rule whose keywords a
// text lacks. Its decoding passes (base64 and hex segments) are off, as in its library default.

// gitleaks' Detector is safe for concurrent use (its own scans run fragments in parallel on one).
type detector struct {
	gitleaks *detect.Detector
	keywords *ahocorasick.Trie
}

var (
	detectorOnce sync.Once
	theDetector  *detector
)

// Warm loads the detector in the background, so that a command that will redact free text
// later (doctor's findings, a bundle) does not wait for it then.
func Warm() { go loadDetector() }

func loadDetector() *detector {
	detectorOnce.Do(func() {
		// gitleaks logs to stderr by default; nothing of it may reach the user's terminal.
		logging.Logger = zerolog.Nop()
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			// The rule set is compiled into gitleaks; it fails to load only if gitleaks is
			// broken, and the tests would fail first. The other layers still hold.
			return
		}
		kw := make([]string, 0, len(d.Config.Keywords))
		for k := range d.Config.Keywords {
			kw = append(kw, string(asciiLower(k)))
		}
		theDetector = &detector{gitleaks: d, keywords: ahocorasick.NewTrieBuilder().AddStrings(kw).Build()}
	})
	return theDetector
}

// detected calls found with every secret gitleaks finds in s's lines that hold a keyword.
func detected(s string, found func(string)) {
	if s == "" {
		return
	}
	withLower(s, func(lower []byte) { detectedIn(s, lower, found) })
}

// detectedIn is detected with s lower-cased already (lower).
func detectedIn(s string, lower []byte, found func(string)) {
	d := loadDetector()
	if d == nil || s == "" {
		return
	}
	var lines []string
	markedLines(d.keywords, lower, func(start, stop int) { lines = append(lines, s[start:stop]) })
	if len(lines) == 0 {
		return
	}
	theMemo.detect(lines, func(text string) []string {
		var secrets []string
		for _, f := range d.gitleaks.DetectString(text) {
			secrets = append(secrets, f.Secret)
		}
		return secrets
	}, found)
}

// memo remembers the secrets gitleaks found in a marked line, by the line's exact text. A fleet's
// objects repeat most of their marked lines (every pod of a group mounts the same token volume
// under the same keys: 79,000 marked lines, 10,000 distinct, in the bench fleet's bundle), and
// gitleaks' rules read a line at a time, so a line read once is not read again. What a line's
// secrets are does not depend on where the line stands: found values are replaced everywhere.
type memo struct {
	mu    sync.RWMutex
	lines map[string][]string
	bytes int
	max   int // bytes of lines remembered at most: past it, new lines are read and not remembered
}

var theMemo = newMemo(8 << 20)

func newMemo(maxBytes int) *memo { return &memo{lines: map[string][]string{}, max: maxBytes} }

// detect calls found with the secrets of lines: those remembered from before, then those
// gitleaks (detect) finds in the lines it has not read, in one call (gitleaks' own cost is per
// call). A secret is remembered for each new line that holds it; when one spans lines (no line
// holds it whole), none of that call's lines is remembered, and the next text that holds them
// is read again.
func (m *memo) detect(lines []string, detect func(text string) []string, found func(string)) {
	var fresh []string
	seen := map[string]bool{}
	m.mu.RLock()
	for _, l := range lines {
		secrets, ok := m.lines[l]
		if !ok {
			if !seen[l] {
				seen[l] = true
				fresh = append(fresh, l)
			}
			continue
		}
		for _, v := range secrets {
			found(v)
		}
	}
	m.mu.RUnlock()
	if len(fresh) == 0 {
		return
	}
	held := make([][]string, len(fresh))
	whole := true
	for _, v := range detect(strings.Join(fresh, "\n")) {
		if !secretValue(v) {
			continue
		}
		found(v)
		in := false
		for i, l := range fresh {
			if strings.Contains(l, v) {
				held[i], in = append(held[i], v), true
			}
		}
		whole = whole && in
	}
	if !whole {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, l := range fresh {
		if m.bytes+len(l) > m.max {
			return
		}
		if _, ok := m.lines[l]; !ok {
			// A copy: the line is a slice of its text, which the memo must not keep alive.
			m.lines[strings.Clone(l)] = held[i]
			m.bytes += len(l)
		}
	}
}

// markedLines calls line with the bounds of each line of lower that holds one of trie's words, once
// a line, in order.
func markedLines(trie *ahocorasick.Trie, lower []byte, line func(start, stop int)) {
	lineEnd := -1
	trie.Walk(lower, func(end, _, _ int64) bool {
		if int(end) < lineEnd {
			return true
		}
		start := bytes.LastIndexByte(lower[:end], '\n') + 1
		stop := bytes.IndexByte(lower[end:], '\n')
		if stop < 0 {
			stop = len(lower)
		} else {
			stop += int(end)
		}
		line(start, stop)
		lineEnd = stop
		return true
	})
}

// lowerBufs are the buffers withLower lower-cases texts into: every file a bundle writes is
// lower-cased twice (learned, then redacted), tens of MB a fleet, and none is kept.
var lowerBufs = sync.Pool{New: func() any { return new([]byte) }}

// withLower calls f with s lower-cased (asciiLower) in a reused buffer, which f must not keep.
func withLower(s string, f func(lower []byte)) {
	bp := lowerBufs.Get().(*[]byte)
	b := asciiLowerInto((*bp)[:0], s)
	f(b)
	*bp = b[:0]
	lowerBufs.Put(bp)
}

// asciiLower is s with its ASCII letters lower-cased, every byte where it was (a rune-aware
// lower-casing can change a text's length and so every position after it).
func asciiLower(s string) []byte { return asciiLowerInto(nil, s) }

// asciiLowerInto is asciiLower written over dst's bytes.
func asciiLowerInto(dst []byte, s string) []byte {
	out := append(dst[:0], s...)
	for i := range out {
		c := out[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
