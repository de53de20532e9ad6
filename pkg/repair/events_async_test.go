package repair

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gatedSink blocks every write until open is closed, then records it or fails it.
type gatedSink struct {
	open chan struct{}
	err  error
	mu   sync.Mutex
	got  []string
}

func (s *gatedSink) CreateEvent(_ context.Context, ev *corev1.Event, _ bool) error {
	<-s.open
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, ev.Name)
	return s.err
}

func event(name string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, Reason: EventReason}
}

// CreateEvent returns before the API server answers; Close writes what is queued.
func TestAsyncEventsDoNotWait(t *testing.T) {
	sink := &gatedSink{open: make(chan struct{})}
	a := &AsyncEvents{Sink: sink, Writers: 2}
	a.Start(time.Second)
	done := make(chan struct{})
	go func() {
		for _, n := range []string{"a", "b", "c"} {
			_ = a.CreateEvent(context.Background(), event(n), false)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("CreateEvent waited for the API server")
	}
	close(sink.open)
	a.Close(5 * time.Second)
	if len(sink.got) != 3 {
		t.Errorf("written %v, want a, b and c", sink.got)
	}
}

// A full queue drops the Event and says so; a failed write is reported; nothing blocks.
func TestAsyncEventsReportDropsAndFailures(t *testing.T) {
	sink := &gatedSink{open: make(chan struct{}), err: errors.New("forbidden")}
	var mu sync.Mutex
	var failed []string
	a := &AsyncEvents{Sink: sink, Writers: 1, Queue: 1, Failed: func(ev *corev1.Event, err error) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, ev.Name+": "+err.Error())
	}}
	a.Start(time.Second)
	_ = a.CreateEvent(context.Background(), event("taken"), false) // the writer takes it and blocks
	deadline := time.Now().Add(5 * time.Second)
	for len(a.ch) != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_ = a.CreateEvent(context.Background(), event("queued"), false)
	_ = a.CreateEvent(context.Background(), event("dropped"), false)
	close(sink.open)
	a.Close(5 * time.Second)
	_ = a.CreateEvent(context.Background(), event("late"), false)
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"dropped: " + ErrEventQueueFull.Error(): true, "taken: forbidden": true,
		"queued: forbidden": true, "late: the watchdog is stopping; Event not written": true}
	if len(failed) != len(want) {
		t.Fatalf("failed = %q", failed)
	}
	for _, f := range failed {
		if !want[f] {
			t.Errorf("unexpected failure %q (all: %q)", f, failed)
		}
	}
}
