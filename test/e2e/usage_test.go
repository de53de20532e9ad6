package e2e

import "testing"

// Mistakes cobra catches itself, through kubectl's plugin discovery as a person types them: one
// line naming the problem and the help to read, exit 2. A mistyped chaos subcommand is one of them
// (it used to print the group's help and exit 0, so a CI step with a typo passed).
func TestMistypedCommandsAreOneLineUsageErrors(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ray", "doctr"}, `error: unknown command "doctr" for "kubectl ray" (did you mean "doctor"?); see 'kubectl ray --help'` + "\n"},
		{[]string{"ray", "chaos", "head-kll"}, `error: unknown command "head-kll" for "kubectl ray chaos"; see 'kubectl ray chaos --help'` + "\n"},
		{[]string{"ray", "heal", "a", "b"}, "error: accepts at most 1 arg(s), received 2; see 'kubectl ray heal --help'\n"},
	} {
		res := h.Kubectl(c.args...)
		if res.Code != 2 || res.Stderr != c.want || res.Stdout != "" {
			t.Errorf("kubectl %v: want exit 2 and stderr %q, got %s", c.args, c.want, res)
		}
	}
}
