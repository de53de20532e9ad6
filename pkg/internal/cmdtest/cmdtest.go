// Package cmdtest runs one command the way the root does, for tests of its flags: under a root
// with kubectl's flags, against a kubeconfig that does not exist and clients that cannot be built.
package cmdtest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Run executes `kubectl-ray NAME args...`, NAME being the command newCmd builds over the factory
// it is given, and returns its error. A command built with a runF stops there: a flag test checks
// what the flags parse to and reads no cluster.
func Run(t *testing.T, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) error {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return nil, errors.New("a test of the flags reads no cluster")
	}
	root := &cobra.Command{Use: "kubectl-ray", SilenceErrors: true, SilenceUsage: true}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exit.Usagef("%v", err) })
	cmd := newCmd(f)
	root.AddCommand(cmd)
	root.SetArgs(append([]string{cmd.Name()}, args...))
	return root.ExecuteContext(context.Background())
}

// Parse runs the command newCmd builds (NewCmd(f, runF)) with args up to Validate, and returns
// the options its runF got: nil when Complete or Validate refused.
func Parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	err := Run(t, func(f *cmdutil.Factory) *cobra.Command {
		return newCmd(f, func(o *O) error { got = o; return nil })
	}, args...)
	return got, err
}
