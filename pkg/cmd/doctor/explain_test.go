package doctor_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

func TestExplain(t *testing.T) {
	r := run(t, "scene", nil, "explain", "head-evicted")
	want, _ := diagnose.RuleDoc("head-evicted")
	if r.code != exit.OK || r.stdout != want || !strings.HasPrefix(r.stdout, "## `head-evicted` (error)\n\n- **Fires when** the kubelet evicted a head pod") {
		t.Errorf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
	bad := run(t, "scene", nil, "explain", "head-evict")
	if bad.code != exit.Usage || !strings.HasPrefix(bad.stderr, `error: unknown rule "head-evict": use one of head-evicted, head-terminated, `) ||
		strings.Count(bad.stderr, "\n") != 1 || bad.stdout != "" {
		t.Errorf("unknown rule: exit %d, stderr %q", bad.code, bad.stderr)
	}
}

// RULE completes with the rule IDs.
func TestExplainCompletion(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
	root := &cobra.Command{Use: "kubectl-ray"}
	root.AddCommand(doctor.NewCmd(f, nil))
	root.SetOut(out)
	root.SetArgs([]string{cobra.ShellCompNoDescRequestCmd, "doctor", "explain", "head-t"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := "head-terminated\nhead-terminating-stuck\n:4\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("completion = %q, want %q", out.String(), want)
	}
}
