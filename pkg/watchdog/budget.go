package watchdog

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// The watchdog's API budgets (docs/performance.md, "A burst"). Deletes and the informers' lists
// use the command's client (50 requests/s, burst 100): 200 heads evicted at once are deleted within
// about 2 s, as long as --workers deletes in flight keep up with that rate (32 workers: an answer
// within 640 ms; with 8, a busy API server answering in 230 ms made it 5 s).
// Events have a client of their own and are written behind the deletes, so they never
// delay one; the Lease has one too, so a renewal never waits behind either.
const (
	// MaxWorkers bounds Config.Workers.
	MaxWorkers           = 64
	eventQPS, eventBurst = 50, 100
	eventWriters         = 4
	eventQueue           = 4096
	eventTimeout         = 30 * time.Second
	eventsGrace          = 5 * time.Second
	leaseQPS, leaseBurst = 5, 10
)

// asyncEvents writes the watchdog's Events off the heal path, through a client with its own rate
// limit; an Event that cannot be written is logged and counted, and the delete stands.
func asyncEvents(c *kube.Clients, log *repair.Logger, wm *watchMetrics) (*repair.AsyncEvents, error) {
	ec, err := c.WithOwnRateLimit(eventQPS, eventBurst)
	if err != nil {
		return nil, err
	}
	a := &repair.AsyncEvents{Sink: ec, Writers: eventWriters, Queue: eventQueue, Failed: func(ev *corev1.Event, err error) {
		wm.eventError()
		log.Line("warn", "Event not recorded; the delete stands", "reason", ev.Reason,
			"object", strings.ToLower(ev.InvolvedObject.Kind)+"/"+ev.InvolvedObject.Namespace+"/"+ev.InvolvedObject.Name, "error", err.Error())
	}}
	a.Start(eventTimeout)
	return a, nil
}

// identity names this replica in the Lease: the pod name in-cluster (HOSTNAME), plus a random
// suffix so two processes on one host never share it.
func identity() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}
