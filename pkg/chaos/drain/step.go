package drain

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// drainer is the run's disruptive step: cordon the node, then evict each pod concurrently, as
// kubectl drain does, while the probe runs. A refused eviction (429: a PodDisruptionBudget) is
// asked again every RetryRefused until the timeout, and never bypassed. stop ends the evictions
// still asking and waits for them; the run calls it before it uncordons.
type drainer struct {
	c   Cluster
	s   *Settings
	t   *target
	tr  *follow.Losses
	now func() time.Time

	cordoned bool // this run cordoned the node (it was not before)
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// cordonTimeout bounds the cordon's one request.
const cordonTimeout = 30 * time.Second

// step cordons the node and starts the evictions; an error means nothing was changed.
func (d *drainer) step(ctx context.Context) error {
	// The cordon is sent on a context Ctrl-C does not cancel: a patch the client gave up on may
	// still land, and a run that did not know it had cordoned would leave the node cordoned (CI,
	// 2026-12-04: Ctrl-C in the moment of the cordon). Its outcome is always known, so the run
	// uncordons what it cordoned.
	cctx, cancelCordon := context.WithTimeout(context.WithoutCancel(ctx), cordonTimeout)
	_, changed, err := d.c.CordonNode(cctx, d.t.node, true, false)
	cancelCordon()
	if err != nil {
		// The reply was lost (a timeout, a dropped connection), not necessarily the patch: the
		// node is read back, and a cordon this run may have made is taken as its own, so that
		// the run's end uncordons it.
		d.cordoned = d.mayHaveCordoned(ctx)
		return err
	}
	d.cordoned = changed
	if err := ctx.Err(); err != nil {
		return err // interrupted during the cordon: no eviction starts, the run uncordons
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.s.Timeout)
	d.cancel = cancel
	for i := range d.t.pods {
		p := d.t.pods[i]
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.evict(ectx, &p)
		}()
	}
	return nil
}

// mayHaveCordoned reads the node back after a cordon whose reply was lost: true when it is now
// unschedulable and was not before the run, or when it cannot be read (the uncordon that follows
// then leaves schedulable a node this run found schedulable).
func (d *drainer) mayHaveCordoned(ctx context.Context) bool {
	if d.t.alreadyCordoned {
		return false
	}
	for try := 0; try < 3; try++ {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		n, err := d.c.GetNode(rctx, d.t.node)
		cancel()
		if err == nil {
			return n.Spec.Unschedulable
		}
		time.Sleep(time.Duration(try+1) * 500 * time.Millisecond)
	}
	return true
}

// stop ends the evictions still asking (each is told it was given up) and waits for them.
func (d *drainer) stop() {
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
}

// evict asks for one pod's eviction until the API accepts it, the pod is gone, or ctx ends.
func (d *drainer) evict(ctx context.Context, p *corev1.Pod) {
	evict := !d.s.DisableEviction
	for {
		d.tr.Requested(p, d.s.how(), d.now())
		err := d.c.DrainPod(ctx, p, evict, d.s.GracePeriod, false)
		var refused *kube.Refused
		switch {
		case err == nil:
			d.tr.Accepted(p, d.now())
			return
		case apierrors.IsNotFound(err):
			return // gone already: the watch says so
		case apierrors.IsConflict(err):
			// The pod changed since it was read (its status, say): read it again, and go on only
			// while it is the same pod.
			fresh, gerr := d.c.GetPodByName(ctx, p.Namespace, p.Name)
			if gerr != nil || fresh.UID != p.UID {
				return
			}
			p = fresh
			continue
		case errors.As(err, &refused):
			d.tr.RefusedBy(p, refused.Budget, refusedWords(refused), d.now())
		case ctx.Err() != nil:
			d.tr.GaveUp(p, "the run ended before the eviction was accepted", d.now())
			return
		default:
			d.tr.GaveUp(p, err.Error(), d.now())
			return
		}
		select {
		case <-ctx.Done():
			d.tr.GaveUp(p, "still refused when the run ended (--timeout or its end)", d.now())
			return
		case <-time.After(RetryRefused):
		}
	}
}

// refusedWords are the server's words for a refusal: the budget's cause when it gave one.
func refusedWords(r *kube.Refused) string {
	if r.Cause != "" {
		return r.Cause
	}
	return r.Message
}
