package doctor_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
)

// On a terminal the table fits its width: at 80 and 100 columns the messages go under their
// rows, at 200 they wrap beside them; -o wide prints every line whole.
func TestTableFitsTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		width int
		args  []string
	}{
		{80, nil},
		{100, nil},
		{200, nil},
		{80, []string{"-o", "wide"}},
	} {
		name := fmt.Sprintf("width-%d", tc.width)
		if len(tc.args) > 0 {
			name += "-wide"
		}
		t.Run(name, func(t *testing.T) {
			args := append([]string{"-n", "ml"}, tc.args...)
			r := runWith(t, "scene", nil, func(f *cmdutil.Factory) { f.Width = func() int { return tc.width } }, args...)
			if r.code != exit.CheckFailed || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if len(tc.args) > 0 {
				golden.Assert(t, filepath.Join("testdata", "scene-wide.golden"), []byte(r.stdout)) // the same bytes as to a pipe
				return
			}
			golden.Assert(t, filepath.Join("testdata", "scene-table-"+name+".golden"), []byte(r.stdout))
			for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
				if cmdutil.VisibleWidth(line) > tc.width {
					t.Errorf("%d cells, more than %d: %q", cmdutil.VisibleWidth(line), tc.width, line)
				}
				if strings.HasSuffix(line, " ") {
					t.Errorf("trailing space: %q", line)
				}
			}
		})
	}
}
