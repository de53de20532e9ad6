package kube

import (
	"context"
	"regexp"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// client-go's port-forwarder reports what went wrong on a connection (the pod's port has no
// listener, the stream was reset) to utilruntime.HandleError, which prints it to stderr as
// "Unhandled Error". A command's output must stay its own: those errors are kept here per pod,
// for the one that asks (Forward.LastError); errors copying a connection's bytes are dropped; every
// other error goes to the handlers that were there before.

// forwardErrorRE is client-go's wording (tools/portforward: handleConnection):
// "an error occurred forwarding 42873 -> 8265: error forwarding port 8265 to pod NAME/NS, uid : why".
var forwardErrorRE = regexp.MustCompile(`error occurred forwarding \d+ -> (\d+): error forwarding port \d+ to pod ([^/\s]+)/([^,\s]+), uid [^:]*: (.*)`)

// copyErrorRE is client-go's wording when one side of a forwarded connection ends while the other
// still copies: the pod's end closed ("no forward found for port 8265") while the request was
// being written gives "error copying from local connection to remote stream: EOF" (CI). The
// error names no pod, and the client of that connection (a dashboard request, a probe) gets the
// failure on its own connection and reports it.
var copyErrorRE = regexp.MustCompile(`^error copying from (local connection to remote stream|remote stream to local connection): `)

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
				if copyErrorRE.MatchString(err.Error()) {
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
