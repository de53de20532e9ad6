package headkill

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// Cluster is every API operation a head kill makes (pkg/kube's Clients in the command, a fake
// in tests). Errors come back explained, one line each.
type Cluster interface {
	experiment.Reads
	// KillHeadPod kills pod while it is the version read; *kube.Refused when a
	// PodDisruptionBudget blocks an eviction. dryRun has the API server check it only.
	KillHeadPod(ctx context.Context, pod *corev1.Pod, mode kube.KillMode, dryRun bool) error
	// The watches of a run: pods, RayClusters and the RayService; the Service's ready endpoints;
	// a port-forward per endpoint.
	experiment.Cluster
}

// Run resolves the target, confirms, has the API server dry-run the kill (RBAC, admission and
// PodDisruptionBudgets are checked before any request is sent), and runs the kill under the
// probe. It returns the report whenever the probe ran (with an error too when the run did not
// conclude: interrupted, a failed warm-up, a refused kill), and the SLO's outcome.
func Run(ctx context.Context, c Cluster, s Settings) (*Report, chaos.Outcome, error) {
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := s.Ask(fmt.Sprintf("%s head pod %s/%s of RayCluster %s", s.killWhat(t), t.head.Namespace, t.head.Name, t.cluster), s.probeTarget(t)); err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := c.KillHeadPod(ctx, t.head, s.killMode(), true); err != nil {
		return nil, chaos.Outcome{}, killError(err)
	}
	advice := doctorAdvice(ctx, &s)
	return s.run(ctx, c, t, advice)
}

// DryRun says exactly what a run would do. The kill is dry-run on the API server first (RBAC,
// admission and PodDisruptionBudgets are checked), so a plan is returned only once the server
// accepted it; no port-forward is opened, no request is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) (*Plan, error) {
	s.DryRun = true
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return nil, err
	}
	ready, err := readyEndpoints(ctx, c, &s, t)
	if err != nil {
		return nil, err
	}
	if err := c.KillHeadPod(ctx, t.head, s.killMode(), true); err != nil {
		return nil, killError(err)
	}
	cfg := s.config()
	return &Plan{APIVersion: schema.APIVersion, Kind: PlanKind, Settings: s.reportSettings(t),
		Head: PlanHead{Namespace: t.head.Namespace, Name: t.head.Name, UID: string(t.head.UID), RayCluster: t.cluster},
		Kill: s.killWhat(t), Endpoints: ready,
		PlannedRequests: probe.Planned(cfg.Rate, s.Warmup+s.Post()),
		MaxRequests:     probe.Planned(cfg.Rate, s.Schedule(s.Post())),
		SLO:             s.PlanSLO(), ServerDryRun: "accepted"}, nil
}

// readyEndpoints are the probed Service's ready endpoints, as a dry run plans them: none ready
// is refused, as a run would refuse it before any request. A URL target has none.
func readyEndpoints(ctx context.Context, c Cluster, s *Settings, t *target) ([]string, error) {
	ready, err := experiment.PlanEndpoints(ctx, c, s.Namespace, t.service, t.portName)
	if err == nil && t.service != "" && len(ready) == 0 {
		return nil, experiment.NoReadyEndpoints(s.Namespace, t.service, "nothing was killed")
	}
	return ready, err
}

// run starts the watches and the probe's endpoints, runs the kill under the probe, and builds
// the report.
func (s *Settings) run(ctx context.Context, c Cluster, t *target, advice []availability.Advice) (*Report, chaos.Outcome, error) {
	tr := NewTracker(t.head, t.cluster)
	podSelector := ray.LabelCluster + "=" + t.cluster
	if s.RayService != "" {
		// A RayService may replace the whole cluster: follow every Ray pod of the namespace.
		podSelector = ray.LabelCluster
	}
	p := experiment.Probed{
		Watch:  kube.ClusterWatch{Namespace: s.Namespace, PodSelector: podSelector, RayService: s.RayService, Cluster: t.cluster},
		Serve:  experiment.EndpointsSpec{Namespace: s.Namespace, Service: t.service, PortName: t.portName},
		Undone: "nothing was killed",
		Disruption: experiment.Disruption{Probe: s.config(), Warmup: s.Warmup, After: s.After,
			UntilRecovered: s.UntilRecovered, Timeout: s.Timeout, What: s.Mode, Tracker: tr,
			Step: func(ctx context.Context) error { return killHead(ctx, c, t.head, s.killMode()) }},
	}
	if t.service == "" {
		p.URL = s.targetBase()
	}
	// Until the probe starts, Ctrl-C or a slow API server ends the run with nothing killed.
	res, err := s.Execute(ctx, c, p)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	r := s.buildReport(t, res, tr, advice)
	outcome := chaos.Outcome{Passed: r.Verdict.Passed}
	switch {
	case res.Probe != nil && res.Probe.Interrupted:
		return r, outcome, fault.Errorf(fault.Interrupted, "interrupted: the report above covers what was seen")
	case res.WarmupFailed:
		return r, outcome, warmupError(s.probeTarget(t), res.Warmup)
	case res.StepErr != nil:
		return r, outcome, killError(res.StepErr)
	case s.UntilRecovered && !res.Recovered:
		outcome = chaos.Outcome{Passed: false, Note: fault.Errorf(fault.API, "not recovered within %s %s", SetTimeout, s.Timeout)}
	}
	return r, outcome, nil
}

// warmupError says first that nothing was killed, then how the warm-up failed, in the report's
// counts.
func warmupError(target string, w probe.Live) error {
	if w.Requests() == 0 {
		return invalid("nothing was killed: no warm-up request to %s finished; check %s/%s and that it answers 2xx",
			target, SetTarget, SetService)
	}
	var how []string
	for _, c := range []struct {
		name string
		n    int64
	}{{"http", w.HTTPErrors}, {"connection", w.ConnErrors}, {"timeout", w.Timeouts}} {
		if c.n > 0 {
			how = append(how, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	return invalid("nothing was killed: %d of %s to %s failed (%s); check %s/%s and that it answers 2xx",
		w.Errors(), availability.Plural(int(w.Requests()), "warm-up request", "warm-up requests"), target, strings.Join(how, ", "), SetTarget, SetService)
}

func (s *Settings) buildReport(t *target, res *experiment.Result, tr *Tracker, advice []availability.Advice) *Report {
	return Build(Input{Settings: s.reportSettings(t), Probe: res.Probe, Timeline: tr.Timeline(), SLO: s.SLO(), Advice: advice,
		WarmupFailed: res.WarmupFailed})
}
