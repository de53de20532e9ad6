// Package gc sets a command's garbage collector for the memory it holds, once, at its start.
package gc

import (
	"os"
	"runtime/debug"
)

// Policy is how a command's collector runs. Zero fields leave Go's defaults.
type Policy struct {
	// Percent is the collector's target (GOGC): the heap may grow by this much of the live data
	// before a collection.
	Percent int
	// Limit is a soft limit on the memory Go's runtime holds (GOMEMLIMIT), in bytes: nearing it,
	// the collector runs more often than Percent asks. It is soft: when the live data itself
	// nears it, Go caps the collector at about half the CPU and the heap grows past it.
	Limit int64
}

// Watchdog is the watchdog's policy. Nearly all of its heap is the informers' caches, which live
// as long as the process; with Go's default of 100 the heap may grow to twice that before a
// collection, and the process keeps the pages. 35 keeps it to 1.35 times. A collection costs
// little there: an idle watchdog allocates little, and a busy one mostly decodes the few pods of
// the clusters it examines (at 20,000 pods, 50 took the resident size from 201.7 MB to 183.6 MB;
// with the pods cached encoded, 35 against 50 after a hundred heals: docs/performance.md).
var Watchdog = Policy{Percent: 35}

// OneShot is the policy of a run that reads a fleet once and reports (doctor). Its live data
// grows as the LISTs arrive, and each page it decodes is garbage at once; with Go's default
// alone the heap reached twice the live data, 124 MB of 66 MB at 4,000 RayClusters, above
// the doctor-at-scale bound (docs/performance.md). Below 100 MiB nothing changes (1,000
// RayClusters never reach it); above it the collector runs more often, so at 4,000 RayClusters the heap stays near 100 MiB. Past
// about six times that fleet the live data itself nears the limit and the collector takes up to
// half the CPU: set GOMEMLIMIT (or GOGC) to choose otherwise. Measured in docs/performance.md.
var OneShot = Policy{Limit: 90 << 20}

// Bundle is the policy of a bundle: doctor's one-shot read, with every object rendered as JSON,
// redacted and compressed as it arrives. Its live data is doctor's trimmed snapshot, the
// redactor's rules (13.5 MB of them Aho-Corasick tables) and a few MB of compressed files, 30-45 MB
// at 5,000 pods, while rendering makes garbage fast; the resident size is the limit plus the code
// the run touches (48-50 MiB). 64 MiB keeps it under 120 MB (119.8 MB at 5,000 pods); 72 MiB
// reached 123 MB, 80 MiB 131 MB, each a little faster (docs/performance.md).
var Bundle = Policy{Limit: 64 << 20}

// Tune applies p unless GOGC or GOMEMLIMIT is set: whoever sets those has chosen for themselves.
func Tune(p Policy) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if p.Percent != 0 {
		debug.SetGCPercent(p.Percent)
	}
	if p.Limit != 0 {
		debug.SetMemoryLimit(p.Limit)
	}
}
