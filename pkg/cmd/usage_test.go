package cmd

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Mistakes cobra itself catches are one line naming the problem and where to look, exit 2; a
// mistyped chaos subcommand is one of them (a group command printing its help and exiting 0
// would let a CI step with a typo pass).
func TestCobraMistakesAreOneLineUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"doctr"}, `error: unknown command "doctr" for "kubectl ray" (did you mean "doctor"?); see 'kubectl ray --help'` + "\n"},
		{[]string{"doctor", "a", "b"}, "error: accepts at most 1 arg(s), received 2; see 'kubectl ray doctor --help'\n"},
		{[]string{"chaos", "head-kll"}, `error: unknown command "head-kll" for "kubectl ray chaos"; see 'kubectl ray chaos --help'` + "\n"},
		{[]string{"chaos", "head-kill"}, "error: accepts 1 arg(s), received 0; see 'kubectl ray chaos head-kill --help'\n"},
		{[]string{"doctor", "--bogus"}, "error: unknown flag: --bogus; see 'kubectl ray doctor --help'\n"},
	}
	for _, tc := range cases {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Main(append([]string{"kubectl-ray"}, tc.args...), streams)
		if code != exit.Usage || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// The group alone still shows its help.
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if code := Main([]string{"kubectl-ray", "chaos"}, streams); code != exit.OK || out.Len() == 0 {
		t.Errorf("kubectl ray chaos: exit %d, stdout %q", code, out)
	}
}
