package probe

import (
	"fmt"
	"time"
)

// Requests is every finished request that was judged (ok or failed), the count the report's
// totals call "requests": no-endpoint requests are in it (never sent, but failed), requests
// aborted at Ctrl-C are not (Aborted).
func (l Live) Requests() int64 { return l.OK + l.Errors() }

// Aborted is every request that finished without being judged: in flight when the run was
// canceled.
func (l Live) Aborted() int64 { return l.Done - l.Requests() }

// String is the probe's part of the progress line; the command appends the head's state. Its
// counts are the report's: the last line and the report's totals agree.
func (l Live) String() string {
	s := fmt.Sprintf("%s requests %d ok %d errors %d (http %d, conn %d, timeout %d) in flight %d",
		l.Elapsed.Truncate(100*time.Millisecond), l.Requests(), l.OK, l.Errors(), l.HTTPErrors, l.ConnErrors, l.Timeouts, l.InFlight)
	if a := l.Aborted(); a > 0 {
		s += fmt.Sprintf(" aborted %d", a)
	}
	return s
}
