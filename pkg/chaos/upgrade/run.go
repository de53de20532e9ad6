package upgrade

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
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
	experiment.Cluster
}

// target is what the run resolved before anything is changed.
type target struct {
	rs       *rayv1.RayService
	active   string
	patch    []byte
	after    *rayv1.RayService // the server's dry run of the patch
	service  string
	portName string
}

// resolve reads the RayService and its serve Service, builds the patch and has the API server
// dry-run it: a patch that would change nothing in the spec is refused here.
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	rs, err := c.GetRayService(ctx, s.Namespace, s.RayService)
	if err != nil {
		return nil, err
	}
	t := &target{rs: rs, active: rs.Status.ActiveServiceStatus.RayClusterName, service: diagnose.ServeServiceName(s.RayService)}
	switch {
	case t.active == "":
		return nil, chaos.Errorf(chaos.NotFound, "RayService %s/%s has no active RayCluster yet (status.activeServiceStatus.rayClusterName is empty): wait until it serves", s.Namespace, s.RayService)
	case rs.Spec.UpgradeStrategy != nil && rs.Spec.UpgradeStrategy.Type != nil && *rs.Spec.UpgradeStrategy.Type == rayv1.None:
		return nil, invalid("RayService %s/%s has spec.upgradeStrategy.type None: KubeRay would not start a new cluster for the change, so there is no upgrade to probe; nothing was changed",
			s.Namespace, s.RayService)
	case rs.Status.PendingServiceStatus.RayClusterName != "":
		return nil, invalid("RayService %s/%s is already upgrading to RayCluster %s: nothing was changed; wait until that upgrade ends (kubectl get rayservice -n %s %s)",
			s.Namespace, s.RayService, rs.Status.PendingServiceStatus.RayClusterName, s.Namespace, s.RayService)
	}
	if t.patch, err = s.patchOf(rs); err != nil {
		return nil, err
	}
	if t.after, err = c.PatchRayService(ctx, s.Namespace, s.RayService, t.patch, true); err != nil {
		return nil, err
	}
	if t.after.Generation == rs.Generation {
		return nil, invalid("the %s changes nothing in the spec of RayService %s/%s (generation stays %d): nothing would start a new cluster",
			s.what(), s.Namespace, s.RayService, rs.Generation)
	}
	svc, err := c.GetService(ctx, s.Namespace, t.service)
	if err != nil {
		return nil, err
	}
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == s.Port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return t.withPort(p.Name), nil
		}
	}
	return nil, invalid("Service %s/%s has no TCP port %d: pass %s", s.Namespace, t.service, s.Port, experiment.SetPort)
}

func (t *target) withPort(name string) *target { t.portName = name; return t }

// patchOf is the user's patch, or the image patch built from rs.
func (s *Settings) patchOf(rs *rayv1.RayService) ([]byte, error) {
	if s.Patch != "" {
		return []byte(s.Patch), nil
	}
	return ImagePatch(rs, s.Image)
}

func (s *Settings) what() string {
	if s.Image != "" {
		return "image " + s.Image
	}
	return "patch"
}

func (s *Settings) probeTarget(t *target) string {
	return fmt.Sprintf("service/%s:%d", t.service, s.Port)
}

// reportSettings echo what was asked, for the report and the plan.
func (s *Settings) reportSettings(t *target) report.UpgradeSettings {
	return report.UpgradeSettings{RayService: s.RayService, Namespace: s.Namespace, Image: s.Image, Patch: string(t.patch),
		Target: s.probeTarget(t), Method: s.config().Method, Path: experiment.ShownPath(s.config().Path), Rate: s.config().Rate,
		WarmupMs: s.Warmup.Milliseconds(), TimeoutMs: s.Timeout.Milliseconds(), RequestTimeout: s.RequestTimeout.Milliseconds()}
}

// DryRun says exactly what a run would do, once the API server accepted a dry run of the patch;
// nothing is changed, no port-forward is opened and no request is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) (*report.UpgradePlan, error) {
	s.DryRun = true
	s.Defaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return nil, err
	}
	return &report.UpgradePlan{APIVersion: schema.APIVersion, Kind: report.UpgradePlanKind, Settings: s.reportSettings(t),
		ActiveCluster: t.active, Patch: t.patch, Generation: t.rs.Generation, GenerationAfter: t.after.Generation,
		PlannedRequests: probe.Planned(s.config().Rate, s.Timeout), SLO: s.PlanSLO(), ServerDryRun: "accepted"}, nil
}

// Run resolves the RayService, has the API server dry-run the patch, confirms, and applies the
// patch under the probe after a healthy warm-up; it then follows KubeRay until the active cluster
// switched and the old one is deleted, or Timeout. It returns the report whenever the probe ran
// (with an error too when the run did not conclude: interrupted, a failed warm-up, a refused
// patch), and the outcome: passed when the switch happened and the SLO held.
func Run(ctx context.Context, c Cluster, s Settings) (*report.UpgradeReport, chaos.Outcome, error) {
	s.Defaults()
	if err := s.Validate(); err != nil {
		return nil, chaos.Outcome{}, err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := s.Ask(fmt.Sprintf("patch RayService %s/%s (%s), which makes KubeRay replace RayCluster %s with a new one; it is not reverted afterwards",
		s.Namespace, s.RayService, s.what(), t.active), s.probeTarget(t)); err != nil {
		return nil, chaos.Outcome{}, err
	}
	return s.run(ctx, c, t)
}

func (s *Settings) run(ctx context.Context, c Cluster, t *target) (*report.UpgradeReport, chaos.Outcome, error) {
	tr := NewTracker(s.RayService, t.active)
	res, err := s.Execute(ctx, c, experiment.Probed{
		Watch:  kube.ClusterWatch{Namespace: s.Namespace, PodSelector: ray.LabelCluster, RayService: s.RayService},
		Serve:  experiment.EndpointsSpec{Namespace: s.Namespace, Service: t.service, PortName: t.portName},
		Undone: "nothing was changed",
		Disruption: experiment.Disruption{Probe: s.config(), Warmup: s.Warmup, UntilRecovered: true, Timeout: s.post(),
			What: s.what(), Tracker: tr, Step: func(ctx context.Context) error { return s.apply(ctx, c, t) }},
	})
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	r := report.BuildUpgrade(report.UpgradeInput{
		Input:    report.Input{Probe: res.Probe, Timeline: tr.Timeline(), SLO: s.SLO(), WarmupFailed: res.WarmupFailed},
		Settings: s.reportSettings(t), OldCluster: t.active, LastSeen: tr.LastSeen()})
	outcome := chaos.Outcome{Passed: r.Verdict.Passed}
	switch {
	case res.Probe != nil && res.Probe.Interrupted:
		return r, outcome, chaos.Errorf(chaos.Interrupted, "interrupted: the report above covers what was seen; the upgrade goes on without the probe (it is not reverted)")
	case res.WarmupFailed:
		return r, outcome, invalid("nothing was changed: %d of %s to %s failed; check that it answers 2xx", res.Warmup.Errors(),
			report.Plural(int(res.Warmup.Requests()), "warm-up request", "warm-up requests"), s.probeTarget(t))
	case res.StepErr != nil:
		return r, outcome, res.StepErr
	case !r.Upgrade.Switched:
		outcome.Note = chaos.Errorf(chaos.Failed, "the upgrade did not complete within %s %s: %s; it is not reverted", SetTimeout, s.Timeout, r.Upgrade.LastSeen)
	case r.Upgrade.OldClusterDeletedMs == nil:
		fmt.Fprintf(s.Warn, "warning: the old cluster %s was not deleted within %s %s (KubeRay waits spec.rayClusterDeletionDelaySeconds, 60s by default)\n",
			t.active, SetTimeout, s.Timeout)
	}
	return r, outcome, nil
}

// apply patches the RayService for real, as it is after the warm-up: it is read again, refused
// when its spec changed or an upgrade started since resolve, and the patch carries the fresh
// read's resourceVersion (an image patch is built again from it; a --patch is pinned to it), so
// the API server applies it only to the version just checked. The fresh read is needed because
// KubeRay writes the status, and so the resourceVersion, often.
func (s *Settings) apply(ctx context.Context, c Cluster, t *target) error {
	rs, err := c.GetRayService(ctx, s.Namespace, s.RayService)
	if err != nil {
		return err
	}
	switch {
	case rs.Generation != t.rs.Generation:
		return chaos.Errorf(chaos.Failed, "RayService %s/%s changed since it was read (generation %d, now %d): nothing was patched; run the command again",
			s.Namespace, s.RayService, t.rs.Generation, rs.Generation)
	case rs.Status.PendingServiceStatus.RayClusterName != "":
		return chaos.Errorf(chaos.Failed, "RayService %s/%s started upgrading to RayCluster %s during the warm-up: nothing was patched",
			s.Namespace, s.RayService, rs.Status.PendingServiceStatus.RayClusterName)
	}
	var patch []byte
	if s.Image != "" {
		patch, err = ImagePatch(rs, s.Image)
	} else {
		patch, err = PinnedPatch(t.patch, rs)
	}
	if err != nil {
		return err
	}
	_, err = c.PatchRayService(ctx, s.Namespace, s.RayService, patch, false)
	return err
}
