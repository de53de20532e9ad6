package experiment

import (
	"context"
	"net/url"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Cluster is what the engine needs of the cluster: the watches, the Service's ready endpoints
// and a port-forward to each (pkg/kube's Clients, or a fake). An experiment's own Cluster
// embeds it.
type Cluster interface {
	follow.Watcher
	EndpointWatcher
}

// Probed is one experiment's run under the probe: what the watches follow, what is probed, and
// the disruption. The engine fills in the rest from ProbeSettings.
type Probed struct {
	// Watch is what the watches follow; the Disruption's Tracker hears them.
	Watch kube.ClusterWatch
	// URL, when set, is probed as it is (scheme://host[:port]); else Serve's ready endpoints,
	// each behind its own port-forward.
	URL   string
	Serve EndpointsSpec
	// Undone says that nothing was changed, for a run that ends before the step ("nothing was
	// killed").
	Undone string
	// Disruption is the step, its tracker and its schedule; Endpoints, Progress, ProgressEvery
	// and Now are the engine's.
	Disruption Disruption
}

// Execute runs p: it opens the run's session (Interrupts on Ctrl-C, a bounded start-up), starts
// the watches and the probe's endpoints, and runs the Disruption. An error before the probe
// started means nothing was changed; the session's watches and port-forwards end with it.
func (ps *ProbeSettings) Execute(ctx context.Context, c Cluster, p Probed) (*Result, error) {
	run := ps.begin(ctx, p.Undone)
	defer run.close()
	d := p.Disruption
	if err := run.watch(c, p.Watch, d.Tracker, ps.Now, ps.Warn); err != nil {
		return nil, err
	}
	if p.URL != "" {
		u, _ := url.Parse(p.URL)
		d.Endpoints = probe.NewURL(u.Host, p.URL)
	} else {
		sp := p.Serve
		sp.Tracker, sp.Warn, sp.Seed = d.Tracker, ps.Warn, uint64(ps.Now().UnixNano())
		set, feeder, err := run.followServe(c, sp)
		if feeder != nil {
			defer feeder.Close()
		}
		if err != nil {
			return nil, err
		}
		d.Endpoints = set
	}
	d.Progress, d.ProgressEvery, d.Now = ps.Progress, ps.ProgressEvery, ps.Now
	return Run(run.ctx, d), nil
}
