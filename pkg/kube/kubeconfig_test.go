package kube

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

const kubeconfigOneContext = `apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: dev
  user: {token: x}
contexts:
- name: dev
  context: {cluster: dev, user: dev}
current-context: dev
`

// A --context or --cluster the kubeconfig lacks: one line pointing to the kubectl
// command that lists what it has.
func TestMissingKubeconfigEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfigOneContext), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  func(*genericclioptions.ConfigFlags)
		want string
	}{
		{func(f *genericclioptions.ConfigFlags) { *f.Context = "prod" },
			`context "prod" is not in the kubeconfig; list them with: kubectl config get-contexts --kubeconfig ` + path},
		{func(f *genericclioptions.ConfigFlags) { *f.ClusterName = "prod" },
			`cluster "prod" is not in the kubeconfig; list them with: kubectl config get-clusters --kubeconfig ` + path},
	} {
		flags := genericclioptions.NewConfigFlags(true)
		*flags.KubeConfig = path
		c.set(flags)
		_, err := NewClients(flags)
		// The command shows the kubeconfig setting as its flag.
		if err == nil || fault.Render(err, func(f fault.Field) string { return "--" + string(f) }) != c.want || fault.KindOf(err) != fault.API {
			t.Errorf("got %v (exit %d), want %q", err, fault.KindOf(err), c.want)
		}
	}
}
