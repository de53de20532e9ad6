package timeline

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestAddKeepsTimeOrderAndInsertionOrderOnTies(t *testing.T) {
	tl := New(
		Event{Kind: NewHeadReady, At: at(9000)},
		Event{Kind: KillRequested, At: at(1000), Object: "head-a"},
		Event{Kind: OldHeadGone, At: at(3000)},
		Event{Kind: NewHeadCreated, At: at(3000), Object: "head-b"},
	)
	var got []Kind
	for _, e := range tl.Events() {
		got = append(got, e.Kind)
	}
	want := []Kind{KillRequested, OldHeadGone, NewHeadCreated, NewHeadReady}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if k, ok := tl.Kill(); !ok || k.Object != "head-a" {
		t.Fatalf("kill %+v %v", k, ok)
	}
	if _, ok := tl.First(NewHeadReady, at(9001)); ok {
		t.Fatal("found an event before since")
	}
	var empty *Timeline
	if _, ok := empty.Kill(); ok || empty.Events() != nil {
		t.Fatal("nil timeline not empty")
	}
}

func TestEndpointsBack(t *testing.T) {
	tl := New(
		Event{Kind: EndpointAdded, At: at(0), Object: "head-a"},
		Event{Kind: EndpointAdded, At: at(0), Object: "worker-1"},
		Event{Kind: KillRequested, At: at(1000), Object: "head-a"},
		Event{Kind: EndpointRemoved, At: at(1500), Object: "head-a"},
		Event{Kind: EndpointAdded, At: at(2000), Object: "worker-1"}, // duplicate add: no change
		Event{Kind: EndpointAdded, At: at(8000), Object: "head-b"},
	)
	if got := tl.EndpointsAt(at(1600)); !slices.Equal(got, []string{"worker-1"}) {
		t.Fatalf("endpoints at 1.6s %v", got)
	}
	back, ok := tl.EndpointsBack(at(1000))
	if !ok || !back.Equal(at(8000)) {
		t.Fatalf("back %v %v, want 8s", back, ok)
	}
	if _, ok := New(Event{Kind: EndpointAdded, At: at(0), Object: "w"}).EndpointsBack(at(1)); ok {
		t.Fatal("never dropped, yet reported back")
	}
}
