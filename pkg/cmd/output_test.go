package cmd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Every command whose -o is a format refuses one it does not print with exit 2, in the same words,
// before it asks the cluster anything: the kubeconfig names a server that counts every request.
func TestUnknownOutputIsAUsageErrorEverywhere(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "a command asked the cluster", http.StatusInternalServerError)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: `+srv.URL+`}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ml}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)

	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	checked := 0
	walk(NewRootCmd(cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)), func(c *cobra.Command) {
		fl := c.Flags().Lookup("output")
		if fl == nil || !c.Runnable() {
			return
		}
		if fl.Annotations[cmdutil.FormatsAnnotation] == nil {
			if c.CommandPath() != "kubectl ray bundle" { // bundle's -o is the archive it writes
				t.Errorf("%s: -o is not cmdutil.AddOutputFlag's (%q)", c.CommandPath(), fl.Usage)
			}
			return
		}
		checked++
		args := strings.Fields(c.CommandPath())[2:]
		if need, ok := needs[c.CommandPath()]; ok {
			args = append(args, need...)
		} else if c.Args != nil && c.Args(c, nil) != nil {
			args = append(args, "x") // the one NAME the command needs
		}
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Main(append(append([]string{"kubectl-ray"}, args...), "-o", "bogus"), streams)
		if code != exit.Usage || !strings.HasPrefix(errOut.String(), `error: unknown output format "bogus": use -o `) || out.Len() != 0 {
			t.Errorf("%v -o bogus: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	})
	if checked < 5 {
		t.Errorf("only %d commands have an -o format", checked)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the cluster", n)
	}
}

// needs are the arguments without which a command stops before it looks at -o.
var needs = map[string][]string{
	"kubectl ray chaos upgrade":         {"rayservice/x"},
	"kubectl ray chaos disk-pressure":   {"x", "--percent", "50"},
	"kubectl ray chaos memory-pressure": {"x", "--percent", "50"},
}

func walk(c *cobra.Command, visit func(*cobra.Command)) {
	visit(c)
	for _, sub := range c.Commands() {
		walk(sub, visit)
	}
}
