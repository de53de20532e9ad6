package kube

import (
	"context"
	"errors"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// client-go's port-forward errors never reach the handlers before ours (which print "Unhandled
// Error" to stderr): the pod end's words are kept for its Forward, copy errors are dropped, and
// every other error still goes on.
func TestForwardErrorsStayOffStderr(t *testing.T) {
	var passed []string
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, _ string, _ ...any) {
		passed = append(passed, err.Error())
	}}
	keepForwardErrors()
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })

	for _, msg := range []string{
		// The wordings of client-go v0.34 tools/portforward handleConnection.
		"an error occurred forwarding 42873 -> 8265: error forwarding port 8265 to pod demo-head/ns1, uid : no forward found for port 8265",
		"error copying from local connection to remote stream: EOF",
		"error copying from remote stream to local connection: read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer",
		"an informer's own error",
	} {
		utilruntime.HandleError(errors.New(msg))
	}
	if len(passed) != 1 || passed[0] != "an informer's own error" {
		t.Errorf("passed on to the earlier handlers: %q, want only the informer's error", passed)
	}
	f := &Forward{key: "ns1/demo-head:8265"}
	if got := f.LastError(); got != "no forward found for port 8265" {
		t.Errorf("LastError = %q", got)
	}
}
