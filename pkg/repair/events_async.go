package repair

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ErrEventQueueFull: more Events waited to be written than the queue holds; this one was dropped.
var ErrEventQueueFull = errors.New("the Event queue is full; Event dropped")

// AsyncEvents is an EventSink for the watchdog that takes Events off the heal path: CreateEvent
// queues the Event and returns at once, and Writers goroutines write the queue through Sink.
// When a node dies with many heads on it, each heal is then one request (the delete) instead of
// three, and the Events follow at the pace of Sink's own client. (client-go's record
// package is asynchronous too, but it builds its Events from an object reference: it cannot write
// the prebuilt core/v1 Events heal records, with their Related object and Action, and no dry run.)
//
// A failed or dropped Event is handed to Failed; the delete it records stands either way.
type AsyncEvents struct {
	Sink    EventSink
	Writers int
	// Queue bounds the Events waiting; beyond it they are dropped (ErrEventQueueFull).
	Queue  int
	Failed func(ev *corev1.Event, err error)

	once   sync.Once
	mu     sync.Mutex
	closed bool
	ch     chan queuedEvent
	wg     sync.WaitGroup
}

type queuedEvent struct {
	ev     *corev1.Event
	dryRun bool
}

// Start runs the writers; they write until Close, each write bounded by timeout.
func (a *AsyncEvents) Start(timeout time.Duration) {
	a.init()
	if a.Writers <= 0 {
		a.Writers = 1
	}
	for i := 0; i < a.Writers; i++ {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for q := range a.ch {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				err := a.Sink.CreateEvent(ctx, q.ev, q.dryRun)
				cancel()
				if err != nil {
					a.fail(q.ev, err)
				}
			}
		}()
	}
}

func (a *AsyncEvents) init() {
	a.once.Do(func() {
		if a.Queue <= 0 {
			a.Queue = 4096
		}
		a.ch = make(chan queuedEvent, a.Queue)
	})
}

// CreateEvent queues ev; it never waits for the API server. The caller's context does not bound
// the write: an Event records a delete already done, so it is written even when the heal's
// context ends (leadership lost) right after.
func (a *AsyncEvents) CreateEvent(_ context.Context, ev *corev1.Event, dryRun bool) error {
	a.init()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.fail(ev, errors.New("the watchdog is stopping; Event not written"))
		return nil
	}
	select {
	case a.ch <- queuedEvent{ev: ev, dryRun: dryRun}:
	default:
		a.fail(ev, ErrEventQueueFull)
	}
	return nil
}

// Close stops taking Events and waits up to grace for the queued ones to be written.
func (a *AsyncEvents) Close(grace time.Duration) {
	a.init()
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.ch)
	}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
}

func (a *AsyncEvents) fail(ev *corev1.Event, err error) {
	if a.Failed != nil {
		a.Failed(ev, err)
	}
}
