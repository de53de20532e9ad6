package kube

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// What client-go logs through klog arrives as the watchdog's lines, with the message formatted
// and no klog header.
func TestRouteClientLogs(t *testing.T) {
	var mu sync.Mutex
	var got []string
	RouteClientLogs(func(level, msg string, kv ...any) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%s|%s|%v", level, msg, kv))
	})
	defer RouteClientLogs(nil) // later tests' client-go logs go nowhere
	klog.Infof("attempting to acquire leader lease %s...", "ns/kubectl-ray-heal")
	klog.ErrorS(errors.New("connection refused"), "Failed to watch", "reflector", "pods")
	klog.V(4).Infof("not shown at the default verbosity")
	klog.Flush()
	want := []string{
		"info|attempting to acquire leader lease ns/kubectl-ray-heal...|[source client-go]",
		"warn|Failed to watch|[source client-go reflector pods error connection refused]",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
