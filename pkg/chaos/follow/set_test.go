package follow

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// opener hands out fake watches and records the version each was opened from; fail makes the
// next opens fail.
type opener struct {
	opened []string
	w      []*watch.FakeWatcher
	fail   error
}

func (o *opener) open(_ context.Context, rv string) (watch.Interface, error) {
	o.opened = append(o.opened, rv)
	if o.fail != nil {
		return nil, o.fail
	}
	w := watch.NewFakeWithChanSize(10, false)
	o.w = append(o.w, w)
	return w, nil
}

func (o *opener) last() *watch.FakeWatcher { return o.w[len(o.w)-1] }

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
}

// heard records what a stream's On hears, as "name" or "name deleted".
type heard []string

func (h *heard) on(o runtime.Object, deleted bool) {
	s := o.(*corev1.Pod).Name
	if deleted {
		s += " deleted"
	}
	*h = append(*h, s)
}

func openStream(t *testing.T, o *opener, what, rv string, h *heard) *Stream {
	t.Helper()
	s, err := Open(context.Background(), what, rv, o.open)
	if err != nil {
		t.Fatal(err)
	}
	s.On = h.on
	return s
}

func TestUntilHandsEventsAndResumes(t *testing.T) {
	var target, other opener
	var ht, ho heard
	set := &Set{Required: openStream(t, &target, "", "10", &ht), Optional: []*Stream{openStream(t, &other, "others", "20", &ho)}}
	defer set.Stop()

	// The target's watch ends (a server timeout): resumed from the last version seen. The other's
	// version expires (410): resumed from now.
	target.last().Add(pod("a", "11"))
	target.last().Stop()
	other.last().Error(&metav1.Status{Code: http.StatusGone, Reason: metav1.StatusReasonExpired})
	done := false
	steps := 0
	err := set.Until(context.Background(), func() bool { return done }, func() {
		steps++
		switch {
		case len(target.w) == 2 && len(ht) == 1 && len(other.w) == 2 && len(ho) == 0:
			target.last().Delete(pod("a", "12"))
			other.last().Modify(pod("b", "30"))
		case len(ht) == 2 && len(ho) == 1:
			done = true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ht, ",") != "a,a deleted" || strings.Join(ho, ",") != "b" {
		t.Errorf("heard: target %v, other %v", ht, ho)
	}
	if strings.Join(target.opened, ",") != "10,11" || strings.Join(other.opened, ",") != "20," {
		t.Errorf("opened from: target %q, other %q (want the last version seen, and now after a 410)", target.opened, other.opened)
	}
}

func TestUntilDropsAnOptionalStreamWithOneWarning(t *testing.T) {
	var target, other opener
	var ht, ho heard
	var warn bytes.Buffer
	set := &Set{Required: openStream(t, &target, "", "1", &ht), Optional: []*Stream{openStream(t, &other, "node pressure will not show", "", &ho)}, Warn: &warn}
	defer set.Stop()
	other.fail = errors.New("watch refused")
	other.last().Stop()
	target.last().Add(pod("a", "2"))
	err := set.Until(context.Background(), func() bool { return len(ht) == 1 && set.Optional[0] == nil }, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if got := warn.String(); got != "warning: watch refused; node pressure will not show\n" {
		t.Errorf("warning: %q", got)
	}
}

func TestUntilEndsWhenTheRequiredStreamCannotResume(t *testing.T) {
	var target opener
	var ht heard
	set := &Set{Required: openStream(t, &target, "", "1", &ht)}
	defer set.Stop()
	target.fail = errors.New("pods is forbidden")
	target.last().Stop()
	err := set.Until(context.Background(), func() bool { return false }, func() {})
	if err == nil || err.Error() != "pods is forbidden" {
		t.Fatalf("want the reopen's error, got %v", err)
	}
}

func TestUntilTakesWhatWasDeliveredWhenDone(t *testing.T) {
	var target, other opener
	var ht, ho heard
	set := &Set{Required: openStream(t, &target, "", "1", &ht), Optional: []*Stream{openStream(t, &other, "", "", &ho)}}
	defer set.Stop()
	// Done after the target's first event; the other's three events, already delivered, are the run's too.
	for _, n := range []string{"b1", "b2", "b3"} {
		other.last().Add(pod(n, ""))
	}
	target.last().Add(pod("a", "2"))
	err := set.Until(context.Background(), func() bool { return len(ht) == 1 }, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if len(ho) != 3 {
		t.Errorf("the events delivered by the end: %v", ho)
	}
}

func TestUntilTicksAndReadsLines(t *testing.T) {
	var target opener
	var ht heard
	lines := make(chan string, 1)
	lines <- "allocated"
	var got []string
	ticks := 0
	set := &Set{Required: openStream(t, &target, "", "1", &ht), Lines: lines, OnLine: func(l string) { got = append(got, l) },
		Tick: func() { ticks++ }, TickEvery: time.Millisecond}
	defer set.Stop()
	// Done once the clock has moved twice and the line was read: neither needs a watch event.
	err := set.Until(context.Background(), func() bool { return ticks >= 2 && len(got) == 1 }, func() {})
	if err != nil || got[0] != "allocated" {
		t.Fatalf("lines %v, ticks %d, err %v", got, ticks, err)
	}
}

// The caller's deadline ends the follow with no error: the caller judges what was seen.
func TestUntilStopsAtTheDeadline(t *testing.T) {
	var target opener
	var ht heard
	set := &Set{Required: openStream(t, &target, "", "1", &ht)}
	defer set.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := set.Until(ctx, func() bool { return false }, func() {}); err != nil {
		t.Fatalf("the deadline is no error: %v", err)
	}
}
