package headkill

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
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// Cluster is every API operation a head kill makes (pkg/kube's Clients in the command, a fake
// in tests). Errors come back explained, one line each.
type Cluster interface {
	GetRayCluster(ctx context.Context, namespace, name string) (*rayv1.RayCluster, error)
	GetRayService(ctx context.Context, namespace, name string) (*rayv1.RayService, error)
	GetService(ctx context.Context, namespace, name string) (*corev1.Service, error)
	GetPodByName(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	ListPodsMatching(ctx context.Context, namespace, selector string) ([]corev1.Pod, error)
	ListReadyEndpoints(ctx context.Context, namespace, service, portName string) ([]kube.ReadyEndpoint, error)
	// KillHeadPod kills pod while it is the version read; *kube.Refused when a
	// PodDisruptionBudget blocks an eviction. dryRun has the API server check it only.
	KillHeadPod(ctx context.Context, pod *corev1.Pod, mode kube.KillMode, dryRun bool) error
	// LoadSnapshot is what doctor reads, for its advice.
	LoadSnapshot(ctx context.Context, q kube.SnapshotQuery) (*diagnose.Snapshot, error)
	// The watches of a run: pods, RayClusters and the RayService; the Service's ready endpoints;
	// a port-forward per endpoint.
	experiment.Cluster
}

// Run resolves the target, confirms, has the API server dry-run the kill (RBAC, admission and
// PodDisruptionBudgets are checked before any request is sent), and runs the kill under the
// probe. It returns the report whenever the probe ran (with an error too when the run did not
// conclude: interrupted, a failed warm-up, a refused kill), and the SLO's outcome.
func Run(ctx context.Context, c Cluster, s Settings) (*report.Report, chaos.Outcome, error) {
	s.Defaults()
	if err := s.Validate(); err != nil {
		return nil, chaos.Outcome{}, err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := s.Ask(fmt.Sprintf("%s head pod %s/%s of RayCluster %s", s.killWhat(t), t.head.Namespace, t.head.Name, t.cluster), s.probeTarget(t)); err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := c.KillHeadPod(ctx, t.head, s.killMode(), true); err != nil {
		return nil, chaos.Outcome{}, killError(err)
	}
	advice := doctorAdvice(ctx, c, &s)
	return s.run(ctx, c, t, advice)
}

// DryRun says exactly what a run would do. The kill is dry-run on the API server first (RBAC,
// admission and PodDisruptionBudgets are checked), so a plan is returned only once the server
// accepted it; no port-forward is opened, no request is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) (*report.Plan, error) {
	s.DryRun = true
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return nil, err
	}
	if err := c.KillHeadPod(ctx, t.head, s.killMode(), true); err != nil {
		return nil, killError(err)
	}
	cfg := s.config()
	p := &report.Plan{APIVersion: schema.APIVersion, Kind: report.PlanKind, Settings: s.reportSettings(t),
		Head: report.PlanHead{Namespace: t.head.Namespace, Name: t.head.Name, UID: string(t.head.UID), RayCluster: t.cluster},
		Kill: s.killWhat(t), Endpoints: []string{},
		PlannedRequests: probe.Planned(cfg.Rate, s.Warmup+s.post()),
		MaxRequests:     probe.Planned(cfg.Rate, experiment.ScheduleLength(s.Warmup, s.RequestTimeout, s.post())),
		SLO:             s.PlanSLO(), ServerDryRun: "accepted"}
	for _, e := range t.ready {
		p.Endpoints = append(p.Endpoints, fmt.Sprintf("%s:%d", e.Pod, e.Port))
	}
	return p, nil
}

// doctorAdvice is doctor's RayService rules' findings for the target, read before the kill.
// Without permission to read what doctor reads there is no doctor advice; the run goes on.
func doctorAdvice(ctx context.Context, c Cluster, s *Settings) []report.Advice {
	snap, err := c.LoadSnapshot(ctx, kube.SnapshotQuery{Namespace: s.Namespace, Now: s.Now()})
	if err != nil {
		fmt.Fprintf(s.Warn, "warning: no doctor advice: %v\n", err)
		return nil
	}
	target := &diagnose.Target{Kind: "RayCluster", Name: s.Cluster}
	if s.RayService != "" {
		target = &diagnose.Target{Kind: "RayService", Name: s.RayService}
	}
	return AdviceFrom(diagnose.DiagnoseTarget(snap, diagnose.DefaultOptions(), target).Findings)
}

// adviceRules are doctor's rules about 502s during a head restart.
var adviceRules = map[string]bool{
	diagnose.RuleServeHeadInService: true,
	diagnose.RuleServeHeadHasCPUs:   true,
	diagnose.RuleGCSFTOff:           true,
}

// AdviceFrom keeps doctor's findings about 502s during a head restart, as report advice.
func AdviceFrom(fs []diagnose.Finding) []report.Advice {
	var out []report.Advice
	for _, f := range fs {
		if adviceRules[f.Rule] {
			out = append(out, report.Advice{Source: "doctor", Rule: f.Rule, Text: f.Message + "; fix: " + f.Remedy})
		}
	}
	return out
}
