package chaos

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// A hangup (the terminal of an ssh session closed) ends a chaos run as Ctrl-C and SIGTERM do, so
// that the run's clean-up (a drain's uncordon) still happens, instead of killing the process.
func TestHangupEndsTheRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT} {
		ctx, stop := signalContext(context.Background())
		if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Errorf("%v did not end the run's context", sig)
		}
		stop()
	}
}
