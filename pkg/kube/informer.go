package kube

import (
	"context"

	"k8s.io/client-go/tools/cache"
)

// runInformer runs inf until ctx ends, handing every added, changed and deleted object to handle
// (deleted true for deletes, with the last known state when the watch missed the delete) from
// the informer's one notification goroutine. synced, when not nil, is closed once the initial
// list is in the store. An informer retries most errors forever (an expired watch or an API server
// restart only makes it list again); one that retrying cannot fix (forbidden, unauthorized) ends
// it, explained with req. A normal end returns ctx's error.
func runInformer(ctx context.Context, inf cache.SharedIndexInformer, req Request, synced chan<- struct{}, handle func(obj any, deleted bool)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fatal := make(chan error, 1)
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if isFatalWatchError(err) {
			select {
			case fatal <- Explain(err, req):
			default:
			}
			cancel()
		}
	})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { handle(obj, false) },
		UpdateFunc: func(_, obj any) { handle(obj, false) },
		DeleteFunc: func(obj any) { handle(storedObject(obj), true) },
	}); err != nil {
		return err
	}
	go inf.RunWithContext(ctx)
	if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) && synced != nil {
		close(synced)
	}
	<-ctx.Done()
	select {
	case err := <-fatal:
		return err
	default:
		return ctx.Err()
	}
}

// runCoalesced runs inf like runInformer, but calls changed (from one goroutine) once after the
// first sync and then after changes, coalescing a burst of events into one call: for callers that
// recompute from the informer's store rather than react to each object.
func runCoalesced(ctx context.Context, inf cache.SharedIndexInformer, req Request, synced chan<- struct{}, changed func()) error {
	kick := make(chan struct{}, 1)
	listed := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runInformer(ctx, inf, req, listed, func(any, bool) {
			select {
			case kick <- struct{}{}:
			default:
			}
		})
	}()
	select {
	case <-listed:
	case err := <-done:
		return err
	}
	// The initial list's adds are in the store now: one call covers them.
	select {
	case <-kick:
	default:
	}
	changed()
	if synced != nil {
		close(synced)
	}
	for {
		select {
		case err := <-done:
			return err
		case <-kick:
			changed()
		}
	}
}

// storedObject is obj, or, for a delete the informer's watch missed, the last state it stored.
func storedObject(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

// objectAs is what an informer handed over (see storedObject) as a *T; nil when it is not one.
func objectAs[T any](obj any) *T {
	o, _ := storedObject(obj).(*T)
	return o
}
