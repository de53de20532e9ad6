package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// sgr matches color escapes; they take no room on the screen.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// runOnTerminal runs the real binary with stdout on a pseudo-terminal of cols columns, so it
// sees what it sees in a person's terminal (isatty, TIOCGWINSZ); it returns the lines it wrote,
// without the terminal's carriage returns.
func (h *H) runOnTerminal(cols uint16, extraEnv []string, args ...string) (lines []string, code int) {
	h.T.Helper()
	cmd := exec.CommandContext(h.Ctx, env.bin, append([]string{"--kubeconfig", h.SB.Kubeconfig(), "-n", h.NS}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COLUMNS=") && !strings.HasPrefix(kv, "NO_COLOR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: 60})
	if err != nil {
		h.T.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&out, tty)
		done <- err
	}()
	werr := cmd.Wait()
	select {
	case err := <-done:
		// Reading a pseudo-terminal whose other end closed ends in EIO, not EOF.
		if err != nil && !errors.Is(err, syscall.EIO) {
			h.T.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		h.T.Fatal("the terminal's output did not end")
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		h.T.Fatal(werr)
	}
	text := strings.ReplaceAll(out.String(), "\r\n", "\n")
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n"), code
}

// On a terminal of 80 or 100 columns (or COLUMNS=100 on a wider one), doctor's table fits: no
// line is wider than the terminal and none ends in spaces, with color on or off. An evicted head
// (the kubelet's part played through the API) gives the long messages.
func TestDoctorTableFitsTheTerminal(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("narrow", nil)
	h.WaitClusterRunning("narrow", 90*time.Second)
	h.healEvict("narrow")
	piped := h.Run("doctor")
	if piped.Code != 1 || !strings.Contains(piped.Stdout, "head-evicted") {
		t.Fatalf("piped: %s", piped)
	}
	longest := 0
	for _, l := range strings.Split(piped.Stdout, "\n") {
		longest = max(longest, len(l))
	}
	if longest <= 100 {
		t.Fatalf("the piped table's longest line has %d characters: nothing to fit", longest)
	}
	for _, c := range []struct {
		name  string
		cols  uint16
		width int
		env   []string
		color bool
	}{
		{"80 columns", 80, 80, nil, true},
		{"100 columns", 100, 100, nil, true},
		{"100 columns NO_COLOR", 100, 100, []string{"NO_COLOR=1"}, false},
		{"COLUMNS=100 on 200", 200, 100, []string{"COLUMNS=100"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines, code := h.runOnTerminal(c.cols, c.env, "doctor")
			text := strings.Join(lines, "\n")
			if code != 1 || !strings.Contains(sgr.ReplaceAllString(text, ""), "head-evicted") {
				t.Fatalf("exit %d:\n%s", code, text)
			}
			if colored := strings.Contains(text, "\x1b["); colored != c.color {
				t.Errorf("colored %v, want %v", colored, c.color)
			}
			for _, l := range lines {
				plain := sgr.ReplaceAllString(l, "")
				if n := len([]rune(plain)); n > c.width {
					t.Errorf("%d columns, more than %d: %q", n, c.width, plain)
				}
				if strings.HasSuffix(plain, " ") || strings.HasSuffix(l, " ") {
					t.Errorf("trailing spaces: %q", l)
				}
			}
			// Nothing is lost: every word of the piped table is on the terminal.
			if got, want := strings.Fields(sgr.ReplaceAllString(text, "")), strings.Fields(piped.Stdout); len(got) < len(want)-len(want)/10 {
				t.Errorf("the terminal shows %d words, the pipe %d", len(got), len(want))
			}
		})
	}
	// -o wide keeps every line whole on a terminal too, and never pads its last column.
	lines, _ := h.runOnTerminal(80, nil, "doctor", "-o", "wide")
	wider := false
	for _, l := range lines {
		plain := sgr.ReplaceAllString(l, "")
		wider = wider || len(plain) > 80
		if strings.HasSuffix(plain, " ") {
			t.Errorf("-o wide: trailing spaces: %q", l)
		}
	}
	if !wider {
		t.Errorf("-o wide was fitted to 80 columns:\n%s", strings.Join(lines, "\n"))
	}
}
