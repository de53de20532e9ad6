package redact

import (
	"slices"
	"strings"
	"testing"
)

// fakeDetect is a detector that finds every word starting "sk_" and counts its calls.
type fakeDetect struct {
	calls int
	texts []string
}

func (f *fakeDetect) detect(text string) []string {
	f.calls++
	f.texts = append(f.texts, text)
	var out []string
	for _, w := range strings.Fields(text) {
		if strings.HasPrefix(w, "sk_") {
			out = append(out, w)
		}
	}
	return out
}

func collect(m *memo, f func(string) []string, lines ...string) []string {
	var got []string
	m.detect(lines, f, func(v string) { got = append(got, v) })
	slices.Sort(got)
	return got
}

func TestMemoReadsALineOnce(t *testing.T) {
	m, f := newMemo(1<<20), &fakeDetect{}
	first := collect(m, f.detect, "token: sk_live_one", "apiVersion: v1", "token: sk_live_one")
	if want := []string{"sk_live_one"}; !slices.Equal(first, want) || f.calls != 1 || f.texts[0] != "token: sk_live_one\napiVersion: v1" {
		t.Fatalf("first text: found %q in %d calls of %q; want %q in one call, each line once", first, f.calls, f.texts, want)
	}
	// The same lines again, and one new: only the new one is read, the remembered secret is found.
	second := collect(m, f.detect, "apiVersion: v1", "token: sk_live_one", "key: sk_live_two")
	if want := []string{"sk_live_one", "sk_live_two"}; !slices.Equal(second, want) || f.calls != 2 || f.texts[1] != "key: sk_live_two" {
		t.Fatalf("second text: found %q, detector read %q; want %q with only the new line read", second, f.texts, want)
	}
	if collect(m, f.detect, "apiVersion: v1", "key: sk_live_two"); f.calls != 2 {
		t.Errorf("remembered lines were read again: %q", f.texts[2:])
	}
}

func TestMemoForgetsLinesOfASecretAcrossLines(t *testing.T) {
	m := newMemo(1 << 20)
	calls := 0
	across := func(text string) []string {
		calls++
		return []string{"sk_first\nhalf"} // a secret no single line holds whole
	}
	for i := range 2 {
		if got := collect(m, across, "key: sk_first", "half"); len(got) != 1 || calls != i+1 {
			t.Fatalf("call %d: found %q after %d detector calls; want the secret from a fresh read", i, got, calls)
		}
	}
}

func TestMemoStopsRememberingAtItsBound(t *testing.T) {
	m, f := newMemo(len("token: sk_a")), &fakeDetect{}
	collect(m, f.detect, "token: sk_a", "token: sk_b")
	if got := collect(m, f.detect, "token: sk_a", "token: sk_b"); !slices.Equal(got, []string{"sk_a", "sk_b"}) || f.texts[1] != "token: sk_b" {
		t.Errorf("found %q, read %q: want the line past the bound read again, the one within it remembered", got, f.texts)
	}
}

// TestDetectedFindsARememberedSecret: gitleaks' own rule, through the memo, in two texts.
func TestDetectedFindsARememberedSecret(t *testing.T) {
	tok := "hf_" + strings.Repeat("aBcDeFgHiJ", 3) + "kLmN"
	line := "      value: " + tok
	for _, text := range []string{"apiVersion: v1\n" + line + "\n", "kind: Pod\n" + line + "\nhf: api\n"} {
		set := Set{}
		detected(text, set.Add)
		if _, ok := set[tok]; !ok {
			t.Errorf("gitleaks did not find %s in %q (found %v)", tok, text, set)
		}
	}
}

// TestShapeMemoAtAnyOffset: a line's shapes, remembered once, are found again where the line
// stands in another text.
func TestShapeMemoAtAnyOffset(t *testing.T) {
	line := "  REDIS_PASSWORD: s3cr3t-" + t.Name()
	for _, text := range []string{line + "\n", "kind: Pod\nmetadata: {}\n" + line + "\nx: y\n"} {
		got := replaceSpans(text, shapeSpans(text))
		if strings.Contains(got, "s3cr3t-") || !strings.Contains(got, "REDIS_PASSWORD: "+Redacted) {
			t.Errorf("%q redacted as %q", text, got)
		}
	}
	if _, ok := theShapeMemo.lines[line]; !ok {
		t.Errorf("the line was not remembered")
	}
}
