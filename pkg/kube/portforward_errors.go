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
// for the one that asks (Forward.LastError), and every other error goes to the handlers that were
// there before.

// forwardErrorRE is client-go's wording (tools/portforward: handleConnection):
// "an error occurred forwarding 42873 -> 8265: error forwarding port 8265 to pod NAME/NS, uid : why".
var forwardErrorRE = regexp.MustCompile(`error occurred forwarding \d+ -> (\d+): error forwarding port \d+ to pod ([^/\s]+)/([^,\s]+), uid [^:]*: (.*)`)

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
