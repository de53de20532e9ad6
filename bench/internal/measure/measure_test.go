package measure

import (
	"testing"
	"time"
)

func TestArrivalsKeepFirstSighting(t *testing.T) {
	a, t0 := NewArrivals(), time.Unix(100, 0)
	a.See("x", t0)
	a.See("x", t0.Add(time.Second))
	a.See("y", t0.Add(2*time.Second))
	if got, ok := a.Get("x"); !ok || !got.Equal(t0) {
		t.Errorf("x = %v %v, want the first sighting %v", got, ok, t0)
	}
	if a.Len() != 2 || !a.Last().Equal(t0.Add(2*time.Second)) {
		t.Errorf("len %d, last %v", a.Len(), a.Last())
	}
	if !NewArrivals().Last().IsZero() {
		t.Error("an empty record has a last sighting")
	}
}

func TestPercentileNearestRank(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for p, want := range map[float64]time.Duration{50: 5, 99: 10, 100: 10, 0.0001: 1, 10: 1, 11: 2} {
		if got := Percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 99) != 0 {
		t.Error("empty input")
	}
}
