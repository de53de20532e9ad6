package play

import "testing"

// PlayGatewayWeights: over a run of requests each backend gets its weight's share, and a backend
// at weight 0 none.
func TestWeightedSharesByWeight(t *testing.T) {
	w := (*weighted)(nil).update(map[string]int64{"old": 50, "new": 50, "gone": 0})
	got := map[string]int{}
	for range 100 {
		got[w.next()]++
	}
	if got["old"] != 50 || got["new"] != 50 || got["gone"] != 0 {
		t.Errorf("50/50/0 over 100 requests: %v", got)
	}
	w = w.update(map[string]int64{"old": 0, "new": 100})
	for range 10 {
		if b := w.next(); b != "new" {
			t.Fatalf("0/100: got %q", b)
		}
	}
	if b := (*weighted)(nil).update(map[string]int64{}).next(); b != "" {
		t.Errorf("no backend: got %q", b)
	}
}
