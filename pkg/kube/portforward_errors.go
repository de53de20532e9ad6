package kube

import (
	"context"
	"regexp"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// client-go's port-forwarder reports what went wrong on a connection (the pod's port has no
// listener, the stream was reset) to utilruntime's error handlers, which print it to stderr with
// a stack of log fields. A command's output must stay its own: those errors are kept here per pod,
// for the one that asks (Forward.LastError); errors copying a connection's bytes are dropped; every
// other error goes to the handlers that were there before.

// forwardErrorRE is the pod end's wording (the kubelet's, or kwok's, port-forward server), which
// client-go v0.37 (tools/portforward: handleConnection) passes on as the error itself, with the
// message "An error occurred forwarding" and the ports as key/value pairs:
// "error forwarding port 8265 to pod NAME/NS, uid : why".
var forwardErrorRE = regexp.MustCompile(`^error forwarding port (\d+) to pod ([^/\s]+)/([^,\s]+), uid [^:]*: (.*)`)

// copyMsgRE is client-go's message when one side of a forwarded connection ends while the other
// still copies; the error is the bare I/O error. The pod's end closed ("no forward found for port
// 8265") while the request was being written gives "Error copying from local connection to
// remote stream" with EOF (CI). It names no pod, and the client of that connection (a dashboard
// request, a probe) gets the failure on its own connection and reports it.
var copyMsgRE = regexp.MustCompile(`^Error copying from (local connection to remote stream|remote stream to local connection)$`)

var forwardErrors = struct {
	once sync.Once
	mu   sync.Mutex
	last map[string]string // "ns/pod:port" -> the remote's words
}{last: map[string]string{}}

// keepForwardErrors installs the handler, once per process.
func keepForwardErrors() {
	forwardErrors.once.Do(func() {
		next := append([]utilruntime.ErrorHandler(nil), utilruntime.ErrorHandlers...)
		utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(ctx context.Context, err error, msg string, kv ...any) {
			if err != nil {
				if m := forwardErrorRE.FindStringSubmatch(err.Error()); m != nil {
					forwardErrors.mu.Lock()
					forwardErrors.last[m[3]+"/"+m[2]+":"+m[1]] = m[4]
					forwardErrors.mu.Unlock()
					return
				}
				if copyMsgRE.MatchString(msg) {
					return
				}
			}
			for _, h := range next {
				h(ctx, err, msg, kv...)
			}
		}}
	})
}

// LastError is what the pod's end of the forward last reported on a connection ("no forward
// found for port 8265", "connection refused"), "" when nothing went wrong.
func (f *Forward) LastError() string {
	forwardErrors.mu.Lock()
	defer forwardErrors.mu.Unlock()
	return forwardErrors.last[f.key]
}
