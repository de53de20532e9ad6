package doctor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Without -n the namespace is read from the kubeconfig; when the kubeconfig itself is broken the
// error must name the kubeconfig, not suggest -n (found on the sandbox: `doctor --kubeconfig bad`
// said "pass -n NAMESPACE").
func TestBrokenKubeconfigNamesTheKubeconfig(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("this: is: not: a kubeconfig\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"does not parse": {"--kubeconfig", garbage},
		"does not exist": {"--kubeconfig", filepath.Join(dir, "missing")},
	} {
		t.Run(name, func(t *testing.T) {
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
			root := &cobra.Command{Use: "kubectl-ray", SilenceErrors: true, SilenceUsage: true}
			f.ConfigFlags.AddFlags(root.PersistentFlags())
			root.AddCommand(doctor.NewCmd(f, nil))
			root.SetArgs(append([]string{"doctor"}, args...))
			err := root.Execute()
			if exit.CodeOf(err) != exit.API || err == nil ||
				!strings.HasPrefix(err.Error(), "cannot load a cluster configuration: ") || strings.Contains(err.Error(), "-n NAMESPACE") {
				t.Fatalf("got %v (exit %d)", err, exit.CodeOf(err))
			}
		})
	}
}
