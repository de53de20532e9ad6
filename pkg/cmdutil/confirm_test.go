package cmdutil

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

func TestConfirm(t *testing.T) {
	c := Confirmation{Prompt: "Delete 1 head pod? [y/N]: ", Refusal: "refusing without --yes", Declined: "not confirmed; nothing was deleted"}
	for _, tc := range []struct {
		name     string
		yes      bool
		terminal bool
		input    string
		err      string
		prompted bool
	}{
		{"--yes asks nothing", true, false, "", "", false},
		{"no terminal refuses", false, false, "y\n", "refusing without --yes", false},
		{"y", false, true, "y\n", "", true},
		{"YES with spaces", false, true, "  YES \n", "", true},
		{"yes without newline", false, true, "yes", "", true},
		{"n", false, true, "n\n", "not confirmed; nothing was deleted", true},
		{"empty line", false, true, "\n", "not confirmed; nothing was deleted", true},
		{"end of input", false, true, "", "not confirmed; nothing was deleted", true},
		{"more than yes", false, true, "y please\n", "not confirmed; nothing was deleted", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, in, _, errOut := genericiooptions.NewTestIOStreams()
			in.WriteString(tc.input)
			f := NewFactory(genericclioptions.NewConfigFlags(false), streams)
			f.StdinTerminal = func() bool { return tc.terminal }
			c := c
			c.Yes = tc.yes
			err := f.Confirm(c)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("err = %v, want nil", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err || exit.CodeOf(err) != exit.NotConfirmed):
				t.Fatalf("err = %v (code %d), want %q (code %d)", err, exit.CodeOf(err), tc.err, exit.NotConfirmed)
			}
			if prompted := errOut.String() == c.Prompt; prompted != tc.prompted {
				t.Errorf("stderr = %q, prompted = %v, want %v", errOut.String(), prompted, tc.prompted)
			}
		})
	}
}
