package headkill

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
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
	RunHeadKillWatch(ctx, startup context.Context, w kube.HeadKillWatch) (<-chan error, error)
	WatchReadyEndpoints(ctx context.Context, namespace, service, portName string, synced chan<- struct{}, handle func([]kube.ReadyEndpoint)) error
	OpenTunnel(ctx context.Context, namespace, pod string, port int) (kube.Tunnel, error)
}

// Run resolves the target, confirms, has the API server dry-run the kill (RBAC, admission and
// PodDisruptionBudgets are checked before any request is sent), and runs the kill under the
// probe. It returns the report whenever the probe ran (with an error too when the run did not
// conclude: interrupted, a failed warm-up, a refused kill), and the SLO's outcome.
func Run(ctx context.Context, c Cluster, s Settings) (*report.Report, chaos.Outcome, error) {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Warn == nil {
		s.Warn = io.Discard
	}
	if err := s.Validate(); err != nil {
		return nil, chaos.Outcome{}, err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := s.Confirm.Ask(chaos.Confirmation{
		Action: fmt.Sprintf("%s head pod %s/%s of RayCluster %s", s.killWhat(t), t.head.Namespace, t.head.Name, t.cluster),
		While:  fmt.Sprintf("probing %s at %v/s", s.probeTarget(t), s.probeCfg.Rate),
	}); err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := c.KillHeadPod(ctx, t.head, s.killMode, true); err != nil {
		return nil, chaos.Outcome{}, killError(err)
	}
	advice := doctorAdvice(ctx, c, &s)
	return s.run(ctx, c, t, advice)
}

// DryRun says exactly what a run would do, on s.Out. The kill is dry-run on the API server
// (RBAC, admission and PodDisruptionBudgets are checked); no port-forward is opened, no request
// is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) error {
	s.DryRun = true
	if err := s.Validate(); err != nil {
		return err
	}
	t, err := resolve(ctx, c, &s)
	if err != nil {
		return err
	}
	out, cfg := s.Out, s.probeCfg
	fmt.Fprintf(out, "Dry run of a head kill of %s in namespace %s: nothing is killed and no request is sent.\n", s.targetName(), s.Namespace)
	fmt.Fprintf(out, "Would kill:   pod %s (head of RayCluster %s) by %s\n", t.head.Name, t.cluster, s.killWhat(t))
	if t.service != "" {
		names := make([]string, len(t.ready))
		for i, e := range t.ready {
			names[i] = fmt.Sprintf("%s:%d", e.Pod, e.Port)
		}
		fmt.Fprintf(out, "Would probe:  %s %s%s at %v/s through a port-forward to each of %d ready endpoints: %s\n",
			cfg.Method, s.probeTarget(t), ShownPath(cfg.Path), cfg.Rate, len(t.ready), strings.Join(names, ", "))
	} else {
		fmt.Fprintf(out, "Would probe:  %s %s%s at %v/s\n", cfg.Method, s.targetBase, ShownPath(cfg.Path), cfg.Rate)
	}
	fmt.Fprintf(out, "Schedule:     warm-up %s (the kill happens only if every warm-up request succeeds), then probe %s; request timeout %s; about %d requests (at most %d if the warm-up's last answers and the kill take their whole allowance)\n",
		s.Warmup, s.afterText(), s.RequestTimeout, probe.Planned(cfg.Rate, s.Warmup+s.post()),
		probe.Planned(cfg.Rate, ScheduleLength(s.Warmup, s.RequestTimeout, s.post())))
	fmt.Fprintf(out, "SLO:          %s\n", s.slo())
	if err := c.KillHeadPod(ctx, t.head, s.killMode, true); err != nil {
		return killError(err)
	}
	fmt.Fprintf(out, "The API server accepted a dry run of the kill of pod %s/%s.\n", t.head.Namespace, t.head.Name)
	return nil
}

func (s *Settings) afterText() string {
	if s.UntilRecovered {
		return fmt.Sprintf("until recovered, at most %s", s.Timeout)
	}
	return s.After.String()
}

func (s *Settings) slo() string {
	var out []string
	if s.MaxErrorsSet {
		out = append(out, fmt.Sprintf("max-errors %d", s.MaxErrors))
	}
	if s.MinAvailabilitySet {
		out = append(out, fmt.Sprintf("min-availability %v%%", s.MinAvailability))
	}
	if len(out) == 0 {
		return "none (exit 0 whatever happens)"
	}
	return strings.Join(out, ", ")
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
