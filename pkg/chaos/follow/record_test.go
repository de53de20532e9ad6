package follow

import (
	"testing"
	"time"
)

// The endpoints heard become one event per pod that came or went; EndpointsBack compares the
// last set heard with a count, and holds when no Service is probed.
func TestRecordEndpoints(t *testing.T) {
	var r Record
	if !r.EndpointsBack(2) {
		t.Error("no Service probed: the endpoints are not waited for")
	}
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	r.Endpoints([]string{"a", "b"}, t0)
	r.Endpoints([]string{"b"}, t0.Add(time.Second))
	r.Endpoints([]string{"b", "c"}, t0.Add(2*time.Second))
	var got []string
	for _, e := range r.Timeline().Events() {
		got = append(got, string(e.Kind)+" "+e.Object)
	}
	want := []string{"EndpointAdded a", "EndpointAdded b", "EndpointRemoved a", "EndpointAdded c"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
	if r.LastChange != t0.Add(2*time.Second) || !r.EndpointsBack(2) || r.EndpointsBack(3) {
		t.Errorf("last change %v, ready %v", r.LastChange, r.ReadyEndpoints)
	}
}
