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
			kw = append(kw, string(asciiLower([]byte(k))))
		}
		theDetector = &detector{gitleaks: d, keywords: ahocorasick.NewTrieBuilder().AddStrings(kw).Build()}
	})
	return theDetector
}

// detected calls found with every secret gitleaks finds in s's lines that hold a keyword.
func detected(s string, found func(string)) {
	d := loadDetector()
	if d == nil || s == "" {
		return
	}
	lower := asciiLower([]byte(s))
	var lines [][2]int
	markedLines(d.keywords, lower, func(start, stop int) { lines = append(lines, [2]int{start, stop}) })
	if len(lines) == 0 {
		return
	}
	// One call for all the lines a keyword marks: gitleaks' own cost is per call, and its
	// rules read a line at a time.
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(s[l[0]:l[1]])
		b.WriteByte('\n')
	}
	for _, f := range d.gitleaks.DetectString(b.String()) {
		if secretValue(f.Secret) {
			found(f.Secret)
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

// asciiLower lower-cases ASCII letters in place, keeping every byte where it was (a rune-aware
// lower-casing can change a text's length and so every position after it).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
