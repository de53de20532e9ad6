package upgrade

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
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

// Cluster is every API operation an upgrade makes (pkg/kube's Clients in the command, a fake in
// tests). Errors come back explained, one line each.
type Cluster interface {
	GetRayService(ctx context.Context, namespace, name string) (*rayv1.RayService, error)
	GetService(ctx context.Context, namespace, name string) (*corev1.Service, error)
	// PatchRayService applies a JSON merge patch; dryRun has the API server check it only.
	PatchRayService(ctx context.Context, namespace, name string, patch []byte, dryRun bool) (*rayv1.RayService, error)
	Gateways
	experiment.Cluster
}

// DryRun says exactly what a run would do, once the API server accepted a dry run of the patch;
// nothing is changed, no port-forward is opened and no request is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) (*Plan, error) {
	s.DryRun = true
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, err
	}
	return &Plan{APIVersion: schema.APIVersion, Kind: PlanKind, Settings: s.reportSettings(t),
		ActiveCluster: t.active, Strategy: t.strategy(), Gateway: t.gatewayName(), Patch: t.patch, Generation: t.rs.Generation, GenerationAfter: t.after.Generation,
		PlannedRequests: probe.Planned(s.config().Rate, s.Timeout), SLO: s.PlanSLO(), ServerDryRun: "accepted"}, nil
}

// Run resolves the RayService, has the API server dry-run the patch, confirms, and applies the
// patch under the probe after a healthy warm-up; it then follows KubeRay until the active cluster
// switched and the old one is deleted, or Timeout. It returns the report whenever the probe ran
// (with an error too when the run did not conclude: interrupted, a failed warm-up, a refused
// patch), and the outcome: passed when the switch happened and the SLO held.
func Run(ctx context.Context, c Cluster, s Settings) (*Report, chaos.Outcome, error) {
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := s.Ask(fmt.Sprintf("patch RayService %s/%s (%s), which makes KubeRay replace RayCluster %s with a new one; it is not reverted afterwards",
		s.Namespace, s.RayService, s.what(), t.active), s.probeTarget(t)); err != nil {
		return nil, chaos.Outcome{}, err
	}
	return s.run(ctx, c, t)
}

func (s *Settings) run(ctx context.Context, c Cluster, t *target) (*Report, chaos.Outcome, error) {
	tr := NewTracker(s.RayService, t.active)
	res, err := s.Execute(ctx, c, experiment.Probed{
		Watch:  kube.ClusterWatch{Namespace: s.Namespace, PodSelector: ray.LabelCluster, RayService: s.RayService},
		Serve:  experiment.EndpointsSpec{Namespace: t.serviceNS, Service: t.service, PortName: t.portName},
		Undone: "nothing was changed",
		Disruption: experiment.Disruption{Probe: s.config(), Warmup: s.Warmup, UntilRecovered: true, Timeout: s.post(),
			What: s.what(), Tracker: tr, Step: func(ctx context.Context) error { return s.apply(ctx, c, t) }},
	})
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	r := buildReport(reportInput{
		Input:    availability.Input{Probe: res.Probe, Timeline: tr.Timeline(), SLO: s.SLO(), WarmupFailed: res.WarmupFailed},
		Settings: s.reportSettings(t), OldCluster: t.active, LastSeen: tr.LastSeen(), Strategy: t.strategy(), Gateway: t.gatewayName()})
	outcome := chaos.Outcome{Passed: r.Verdict.Passed}
	switch {
	case res.Probe != nil && res.Probe.Interrupted:
		return r, outcome, fault.Errorf(fault.Interrupted, "interrupted: the report above covers what was seen; the upgrade goes on without the probe (it is not reverted)")
	case res.WarmupFailed:
		return r, outcome, invalid("nothing was changed: %d of %s to %s failed; check that it answers 2xx", res.Warmup.Errors(),
			availability.Plural(int(res.Warmup.Requests()), "warm-up request", "warm-up requests"), s.probeTarget(t))
	case res.StepErr != nil:
		return r, outcome, res.StepErr
	case !r.Upgrade.Switched:
		outcome.Note = fault.Errorf(fault.API, "the upgrade did not complete within %s %s: %s; it is not reverted", SetTimeout, s.Timeout, r.Upgrade.LastSeen)
	case r.Upgrade.OldClusterDeletedMs == nil:
		fmt.Fprintf(s.Warn, "warning: the old cluster %s was not deleted within %s %s (KubeRay waits spec.rayClusterDeletionDelaySeconds, 60s by default)\n",
			t.active, SetTimeout, s.Timeout)
	}
	return r, outcome, nil
}
