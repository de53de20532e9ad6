package load

import (
	"os"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// klog's logger is process-wide, and setting it races with informers of earlier tests that are
// still winding down: route it once before any test runs, as a command does before its informers.
func TestMain(m *testing.M) {
	kube.RouteClientLogs(nil)
	os.Exit(m.Run())
}
