package follow

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// OpenFunc opens a watch from resourceVersion rv ("" for from now).
type OpenFunc func(ctx context.Context, rv string) (watch.Interface, error)

// Stream is one watch of a Set, resumed from the last version seen when the server ends it
// (timeouts), and from now when that version has expired (compaction).
type Stream struct {
	// What is what the run loses without the stream, for the warning when it cannot be resumed.
	What string
	// On hears each object added, modified or deleted.
	On func(obj runtime.Object, deleted bool)

	open OpenFunc
	w    watch.Interface
	rv   string
}

// Open opens a Stream from rv. The caller sets On before following it.
func Open(ctx context.Context, what, rv string, open OpenFunc) (*Stream, error) {
	w, err := open(ctx, rv)
	if err != nil {
		return nil, err
	}
	return &Stream{What: what, open: open, w: w, rv: rv}, nil
}

// Stop ends the watch; a nil Stream is none.
func (s *Stream) Stop() {
	if s != nil {
		s.w.Stop()
	}
}

// take hands one event to On, or, when the server ended the watch (ok false, or an expired
// version), opens it again. An error is the reopen's: the watch is stopped then.
func (s *Stream) take(ctx context.Context, ev watch.Event, ok bool) error {
	if ok && !isExpired(ev) {
		if a, err := meta.Accessor(ev.Object); err == nil && a.GetResourceVersion() != "" {
			s.rv = a.GetResourceVersion()
		}
		if (ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted) && s.On != nil {
			s.On(ev.Object, ev.Type == watch.Deleted)
		}
		return nil
	}
	s.w.Stop()
	if ok {
		s.rv = "" // expired: from now
	}
	w, err := s.open(ctx, s.rv)
	if err != nil {
		s.w = watch.NewEmptyWatch()
		return err
	}
	s.w = w
	return nil
}

func isExpired(ev watch.Event) bool {
	st, ok := ev.Object.(*metav1.Status)
	return ev.Type == watch.Error && ok && (st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired)
}
