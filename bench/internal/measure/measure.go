// Package measure holds what the benchmarks time with: when each thing was first seen, and
// nearest-rank percentiles of the durations between.
package measure

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Arrivals records when something was first seen, by key; watches of several goroutines write it.
type Arrivals struct {
	mu sync.Mutex
	at map[string]time.Time
}

// NewArrivals is an empty record.
func NewArrivals() *Arrivals { return &Arrivals{at: map[string]time.Time{}} }

// See records t for k unless k was seen before.
func (a *Arrivals) See(k string, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.at[k]; !ok {
		a.at[k] = t
	}
}

// Get is when k was first seen.
func (a *Arrivals) Get(k string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at[k]
	return t, ok
}

// Len is how many keys were seen.
func (a *Arrivals) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// Last is the latest first sighting (zero when nothing was seen).
func (a *Arrivals) Last() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	for _, t := range a.at {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// Percentile is the nearest-rank p-th percentile of ds (0 when ds is empty).
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(math.Ceil(p/100*float64(len(s))))-1]
}

// Summary is p50, p99, min and max, to 0.1 ms.
func Summary(ds []time.Duration) string {
	r := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("p50 %s, p99 %s, min %s, max %s", r(Percentile(ds, 50)), r(Percentile(ds, 99)), r(Percentile(ds, 0.0001)), r(Percentile(ds, 100)))
}
