package experiment

import (
	"context"
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// EndpointWatcher is what following a Service's endpoints needs of the cluster.
type EndpointWatcher interface {
	WatchReadyEndpoints(ctx context.Context, namespace, service, portName string, synced chan<- struct{}, handle func([]kube.ReadyEndpoint)) error
	OpenTunnel(ctx context.Context, namespace, pod string, port int) (kube.Tunnel, error)
}

// EndpointsSpec is the Service FollowEndpoints follows.
type EndpointsSpec struct {
	Namespace, Service, PortName string
	Tracker                      EndpointsFollower // may be nil
	Warn                         io.Writer
	Seed                         uint64 // of the set's order
}

// FollowEndpoints keeps a probe set equal to the Service's ready endpoints, each behind its own
// port-forward, and returns once the first set is open (it may be empty: the caller decides).
// The watch and the forwards live until watchCtx ends or the Feeder is closed; startCtx bounds
// the wait for the first set (its error is returned when it ends first).
func FollowEndpoints(watchCtx, startCtx context.Context, c EndpointWatcher, sp EndpointsSpec) (*EndpointSet, *Feeder, error) {
	set := NewEndpointSet(RoundRobin, sp.Seed)
	feeder := NewFeeder(watchCtx, set, func(ctx context.Context, pod string, port int) (Forward, error) {
		return c.OpenTunnel(ctx, sp.Namespace, pod, port)
	}, sp.Tracker, sp.Warn)
	first := make(chan error, 1)
	synced := make(chan struct{})
	go func() {
		// The callback and the error below run in this goroutine, one after the other.
		delivered, failed := false, false
		err := c.WatchReadyEndpoints(watchCtx, sp.Namespace, sp.Service, sp.PortName, synced, func(ready []kube.ReadyEndpoint) {
			if failed || watchCtx.Err() != nil {
				return // the run already ended on the first error
			}
			err := feeder.Update(ready)
			if !delivered {
				delivered, failed = true, err != nil
				first <- err
			} else if err != nil {
				fmt.Fprintf(sp.Warn, "warning: %v\n", err)
			}
		})
		switch {
		case err == nil || watchCtx.Err() != nil:
		case !delivered:
			first <- err
		default:
			// Mid-run (a token expired, RBAC revoked): the endpoints freeze from here on.
			fmt.Fprintf(sp.Warn, "warning: the endpoint watch ended: %v; endpoint changes after this are not seen\n", err)
		}
	}()
	select {
	case err := <-first:
		if err != nil {
			return nil, feeder, err
		}
	case <-startCtx.Done():
		return nil, feeder, startCtx.Err()
	}
	return set, feeder, nil
}

// followServe is FollowEndpoints for a run's session: its start-up errors explained, and an empty
// first set refused (there is nothing to probe, so the disruptive step is not taken; undone says
// so). The caller closes the Feeder, which may be returned with an error.
func (s *session) followServe(c EndpointWatcher, sp EndpointsSpec) (*EndpointSet, *Feeder, error) {
	set, feeder, err := FollowEndpoints(s.watchCtx, s.startCtx, c, sp)
	switch {
	case err != nil:
		return nil, feeder, s.startError(err)
	case len(set.Names()) == 0:
		return nil, feeder, NoReadyEndpoints(sp.Namespace, sp.Service, s.undone)
	}
	return set, feeder, nil
}

// NoReadyEndpoints says the probed Service has no ready endpoints; undone says that nothing was
// changed ("nothing was killed").
func NoReadyEndpoints(ns, svc, undone string) error {
	return fault.Errorf(fault.NotFound, "Service %s/%s has no ready endpoints, so there is nothing to probe and %s; check with: kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s",
		ns, svc, undone, ns, svc)
}
