package kube

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// LeaseName is the Lease the watchdog's replicas elect their leader with.
const LeaseName = "kubectl-ray-heal"

// Election timings: client-go's defaults for controllers. A leader that cannot renew for
// RenewDeadline stops acting; another takes over after LeaseDuration.
type Election struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultElection is what kube-controller-manager uses.
var DefaultElection = Election{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// CheckLeaseNamespace makes sure the Lease can be written in namespace before the watchdog starts:
// a server-side dry-run create answers "namespace not found" or "forbidden" without writing.
func (c *Clients) CheckLeaseNamespace(ctx context.Context, namespace string) error {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: namespace}}
	_, err := c.Kube.CoordinationV1().Leases(namespace).Create(ctx, lease, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil || apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsNotFound(err):
		return fault.Errorf(fault.Invalid, "lease namespace %q does not exist; pass %s with an existing namespace (the one the watchdog runs in)", namespace, SetLeaseNamespace)
	}
	return Explain(err, Request{Verb: "create", Resource: "leases", Namespace: namespace, Host: c.Host()})
}

// RunElected takes part in the election for the Lease in namespace as identity, and runs lead
// while leader. lead's context is cancelled the moment leadership is lost, so the watchdog stops
// acting at once; then RunElected campaigns again, until ctx ends. notify hears "leading",
// "lost" and "following <identity>".
func (c *Clients) RunElected(ctx context.Context, namespace, identity string, timing Election, lead func(context.Context), notify func(event, detail string)) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: namespace},
		Client:     c.Kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	// term is held while lead runs: a new campaign waits for the previous term's lead to
	// return, so two terms never overlap in this process.
	var term sync.Mutex
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:          lock,
			LeaseDuration: timing.LeaseDuration,
			RenewDeadline: timing.RenewDeadline,
			RetryPeriod:   timing.RetryPeriod,
			// On shutdown the Lease is released, so another replica takes over at once
			// instead of after LeaseDuration.
			ReleaseOnCancel: true,
			Name:            LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					term.Lock()
					defer term.Unlock()
					if ctx.Err() != nil {
						return // the term ended before it began
					}
					notify("leading", identity)
					lead(ctx)
				},
				OnStoppedLeading: func() { notify("stopped", identity) },
				OnNewLeader: func(id string) {
					if id != identity {
						notify("following", id)
					}
				},
			},
		})
		if err != nil {
			return fault.Errorf(fault.Invalid, "leader election: %v", err)
		}
		// Run returns when leadership is lost (lead's context is then cancelled) or ctx ends.
		le.Run(ctx)
		term.Lock()
		term.Unlock() //nolint:staticcheck // waits for the term's lead to return
	}
	return ctx.Err()
}
