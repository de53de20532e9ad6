package kube

import (
	"os"
	"testing"
)

// klog's logger is process-wide, and setting it races with informers of earlier tests that are
// still winding down: route it once before any test runs, as a command does before its informers.
func TestMain(m *testing.M) {
	RouteClientLogs(nil)
	os.Exit(m.Run())
}
