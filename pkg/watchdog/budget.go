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

// identity names this replica in the Lease: the pod's name (POD_NAME, which the chart sets from
// the downward API; else the hostname, which is the pod's name in-cluster but the node's on the
// host's network), plus a random suffix so two processes on one host never share it.
func identity() string {
	return identityFrom(os.Getenv("POD_NAME"), os.Hostname)
}

func identityFrom(podName string, hostname func() (string, error)) string {
	name := podName
	if name == "" {
		name, _ = hostname()
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "_" + hex.EncodeToString(b)
}
