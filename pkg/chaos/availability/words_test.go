package availability

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 requests", 1: "1 request", 2: "2 requests"} {
		if got := Plural(n, "request", "requests"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
