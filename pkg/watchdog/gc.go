package watchdog

import (
	"os"
	"runtime/debug"
)

// watchGCPercent is the watchdog's garbage collector target. Nearly all of its heap is the
// informers' caches, which live as long as the process; with Go's default of 100 the heap may
// grow to twice that before a collection, and the process keeps the pages. 50 keeps it to
// one and a half times. A collection costs little here: an idle watchdog allocates little, and
// at 20,000 pods this took the resident size from 201.7 MB to 183.6 MB (docs/performance.md).
const watchGCPercent = 50

// tuneGC applies watchGCPercent unless GOGC or GOMEMLIMIT says otherwise: whoever sets those
// has chosen for themselves.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(watchGCPercent)
}
