package kube

import (
	"context"
	"errors"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// client-go's port-forward errors never reach the handlers before ours (which print them to
// stderr): the pod end's words are kept for its Forward, copy errors are dropped, and
// every other error still goes on.
func TestForwardErrorsStayOffStderr(t *testing.T) {
	var passed []string
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, _ string, _ ...any) {
		passed = append(passed, err.Error())
	}}
	keepForwardErrors()
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })

	// The calls of client-go v0.37 tools/portforward handleConnection: the pod end's words as the
	// error, client-go's own as the message.
	logger := klog.Background()
	for _, c := range []struct{ err, msg string }{
		{"error forwarding port 8265 to pod demo-head/ns1, uid : no forward found for port 8265", "An error occurred forwarding"},
		{"EOF", "Error copying from local connection to remote stream"},
		{"read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer", "Error copying from remote stream to local connection"},
		{"an informer's own error", "Unhandled Error"},
	} {
		utilruntime.HandleErrorWithLogger(logger, errors.New(c.err), c.msg, "localPort", 42873, "remotePort", 8265)
	}
	if len(passed) != 1 || passed[0] != "an informer's own error" {
		t.Errorf("passed on to the earlier handlers: %q, want only the informer's error", passed)
	}
	f := &Forward{key: "ns1/demo-head:8265"}
	if got := f.LastError(); got != "no forward found for port 8265" {
		t.Errorf("LastError = %q", got)
	}
}
