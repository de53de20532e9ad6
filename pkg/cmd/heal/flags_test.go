package heal

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

func TestWorkersFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "4"}, "--workers applies only to --watch; a one-shot heal deletes its plan in order"},
		{[]string{"--watch", "--yes", "--workers", "0"}, "--workers must be between 1 and 64, e.g. --workers 8"},
		{[]string{"--watch", "--yes", "--workers", "65"}, "--workers must be between 1 and 64, e.g. --workers 8"},
	} {
		o, err := cmdtest.Parse(t, NewCmd, tc.args...)
		if o != nil || exit.CodeOf(err) != exit.Usage || err.Error() != tc.want {
			t.Errorf("%v: err = %v (code %d), want %q", tc.args, err, exit.CodeOf(err), tc.want)
		}
	}
	if o, err := cmdtest.Parse(t, NewCmd, "--watch", "--yes", "--workers", "8"); err != nil || o.workers != 8 || !o.given.workers {
		t.Errorf("--watch --yes --workers 8: err %v, options %+v", err, o)
	}
}

// Complete records what was given, so a default given explicitly is judged as given.
func TestGivenFlagsAreRecorded(t *testing.T) {
	o, err := cmdtest.Parse(t, NewCmd, "-A", "--wait=true", "--timeout", "5m", "--evidence-dir", "ev", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !o.given.wait || !o.given.timeout || !o.given.evidenceDir || o.given.minAge || o.output.Value != cmdutil.FormatJSON {
		t.Errorf("options %+v", o)
	}
	if _, err := cmdtest.Parse(t, NewCmd, "-A", "--watch", "--yes", "--wait=true"); exit.CodeOf(err) != exit.Usage {
		t.Errorf("--watch --wait=true: %v", err)
	}
}

// What heal refuses before it reads anything: Complete and Validate alone.
func TestRefusals(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"rayservice/rc"}, exit.Usage, `cannot heal "rayservice/rc": name a RayCluster (NAME or raycluster/NAME)`},
		// An empty name once meant "every cluster in the namespace".
		{[]string{"raycluster/"}, exit.Usage, `cannot heal "raycluster/": name a RayCluster (NAME or raycluster/NAME)`},
		{[]string{"rc", "-A"}, exit.Usage, "a NAME is looked up in one namespace, as in kubectl get: pass -n NAMESPACE instead of -A, or drop the NAME"},
		{[]string{"--watch", "rc"}, exit.Usage, "--watch watches every RayCluster in scope, not one: use -n NAMESPACE or -A instead of a NAME"},
		{[]string{"--watch", "--wait"}, exit.Usage, "--wait and --timeout belong to a one-shot heal; --watch never waits and never stops"},
		{[]string{"--watch", "--timeout", "1m"}, exit.Usage, "--wait and --timeout belong to a one-shot heal; --watch never waits and never stops"},
		{[]string{"--min-age", "1s"}, exit.Usage, "--min-age applies only to --watch; a one-shot heal acts on what it sees now"},
		{[]string{"--watch", "--min-age", "-1s"}, exit.Usage, "--min-age cannot be negative, e.g. --min-age 10s"},
		{[]string{"--leader-elect"}, exit.Usage, "--leader-elect applies only to --watch; a one-shot heal needs no leader"},
		{[]string{"--watch", "--leader-elect"}, exit.Usage, "--leader-elect needs --lease-namespace NAMESPACE: the namespace the watchdog replicas run in"},
		{[]string{"--watch", "--lease-namespace", "x"}, exit.Usage, "--lease-namespace applies only with --leader-elect"},
		{[]string{"--watch"}, exit.NotConfirmed, "--watch deletes heads without asking: pass --yes, or --dry-run to only log what it would do"},
		{[]string{"--timeout", "0s"}, exit.Usage, "--timeout must be positive, e.g. --timeout 5m"},
		{[]string{"-o", "yaml"}, exit.Usage, `unknown output format "yaml": use -o text|json`},
		{[]string{"--yes", "--no-evidence", "--evidence-dir", "ev"}, exit.Usage, "--no-evidence keeps nothing, so --evidence-dir has nowhere to apply: pass one or the other"},
		{[]string{"--yes", "--evidence-dir", ""}, exit.Usage, "--evidence-dir is empty: give a directory, e.g. --evidence-dir ./kubectl-ray-evidence, or pass --no-evidence"},
	}
	for _, tc := range cases {
		o, err := cmdtest.Parse(t, NewCmd, tc.args...)
		if o != nil || exit.CodeOf(err) != tc.code || err.Error() != tc.msg {
			t.Errorf("heal %v: err = %v (code %d), want %q (code %d)", tc.args, err, exit.CodeOf(err), tc.msg, tc.code)
		}
	}
}
