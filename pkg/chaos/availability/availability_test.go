package availability

import "testing"

// The SLO is checked on the exact ratio, and the figure shown never claims more than was seen.
func TestAvailabilityIsNeverRoundedUp(t *testing.T) {
	for _, c := range []struct {
		ok, n int
		min   float64
		shown float64
		meets bool
	}{
		{200_000 - 201, 200_000, 99.9, 99.899, false}, // 99.8995%: rounding made it 99.9 and passed
		{200_000 - 200, 200_000, 99.9, 99.9, true},    // exactly the minimum
		{999_999, 1_000_000, 100, 99.999, false},      // one failure is not "100% available"
		{1_000_000, 1_000_000, 100, 100, true},
		{999, 1000, 99.9, 99.9, true},
		{0, 0, 0, 0, false}, // nothing finished: unknown, not met
	} {
		if got := availability(c.ok, c.n); got != c.shown {
			t.Errorf("availability(%d, %d) = %v, want %v", c.ok, c.n, got, c.shown)
		}
		if got := meetsAvailability(c.ok, c.n, c.min); got != c.meets {
			t.Errorf("meetsAvailability(%d, %d, %v) = %v, want %v", c.ok, c.n, c.min, got, c.meets)
		}
	}
}
