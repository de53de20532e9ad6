package chaos

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// writeRecorder keeps every action on a fake clientset that is not a get, list or watch.
type writeRecorder struct {
	mu     sync.Mutex
	writes []k8stesting.Action
}

// record prepends the recording reactor; prepended last, it runs first and sees every write.
func (r *writeRecorder) record(c *fake.Clientset) {
	c.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			r.mu.Lock()
			r.writes = append(r.writes, a)
			r.mu.Unlock()
		}
		return false, nil, nil
	})
}

// testFactory is a Factory on test streams, in namespace ns, handing out clients.
func testFactory(ns string, clients *kube.Clients) (f *cmdutil.Factory, out, errOut *bytes.Buffer) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	flags.Namespace = &ns
	f = cmdutil.NewFactory(flags, streams)
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) { return clients, nil }
	return f, out, errOut
}

// execute runs the command newCmd makes on f, as the plugin's root does (errors returned, not
// printed), with cobra's own output on out and errOut.
func execute(f *cmdutil.Factory, out, errOut io.Writer, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) error {
	cmd := newCmd(f)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.ExecuteContext(context.Background())
}

// full is a command built with no runF: the tests that use it run the whole command on fakes.
func full[O any](newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command) func(*cmdutil.Factory) *cobra.Command {
	return func(f *cmdutil.Factory) *cobra.Command { return newCmd(f, nil) }
}
