package cmd

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// -n completes with the cluster's namespaces on every command, and completes nothing (no error
// text) when they cannot be listed.
func TestNamespaceCompletion(t *testing.T) {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__completeNoDesc", "doctor", "-n", "m"}, "ml\nml-dev\n:4\n"},
		{[]string{"__completeNoDesc", "heal", "--namespace", ""}, "default\nml\nml-dev\n:4\n"},
		{[]string{"__completeNoDesc", "chaos", "head-kill", "-n", "d"}, "default\n:4\n"},
	} {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
		f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
			return &kube.Clients{Kube: kfake.NewClientset(ns("default"), ns("ml"), ns("ml-dev"))}, nil
		}
		root := NewRootCmd(f)
		root.SetOut(out)
		root.SetArgs(c.args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: got %q, want %q", c.args, got, c.want)
		}
	}
}
