package probe

import (
	"fmt"
	"time"
)

// String is the probe's part of the progress line; the command appends the head's state.
func (l Live) String() string {
	return fmt.Sprintf("%s sent %d ok %d errors %d (http %d, conn %d, timeout %d) in flight %d",
		l.Elapsed.Truncate(100*time.Millisecond), l.Sent, l.OK, l.Errors(), l.HTTPErrors, l.ConnErrors, l.Timeouts, l.InFlight)
}
