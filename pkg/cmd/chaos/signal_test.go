package chaos

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// The HTML report file goes through the redactor as -o's output does.
func TestReportFileRedacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.html")
	err := writeFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "<td>probe error: Authorization: Bearer h7mlT0kenSecret99 refused</td>\n")
		return err
	})
	b, rerr := os.ReadFile(path)
	if err != nil || rerr != nil || strings.Contains(string(b), "h7mlT0kenSecret99") || !strings.Contains(string(b), "probe error") {
		t.Errorf("report file: %q (%v, %v)", b, err, rerr)
	}
}
