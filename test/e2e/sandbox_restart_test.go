package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// A component of a sandbox can be stopped and started again (the API server outage heal's
// watchdog must survive), without touching the shared sandbox.
func TestSandboxRestartsAPIServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := sandbox.Up(ctx, sandbox.Config{Dir: filepath.Join(env.work, "sandbox-restart"), Operator: sandbox.OperatorNone, Nodes: 1, DieWithParent: true}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Down()
	if err := sb.Stop("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("the API server answered while stopped")
	}
	if err := sb.Start(ctx, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	nodes, err := sb.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("after restart: %v nodes, err %v", len(nodes.Items), err)
	}
}
