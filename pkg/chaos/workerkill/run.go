package workerkill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Run resolves the workers, confirms, has the API server dry-run each kill (RBAC, admission,
// PodDisruptionBudgets), and kills them at once under the probe. It returns the report whenever
// the probe ran (with an error too when the run did not conclude) and the SLO's outcome.
func Run(ctx context.Context, c Cluster, s Settings) (*Report, chaos.Outcome, error) {
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	// Said before anything is killed, so an interrupted run can be repeated.
	fmt.Fprintf(s.Warn, "seed %d (--seed %d picks the same workers again)\n", s.Seed, s.Seed)
	if err := s.Ask(fmt.Sprintf("%s %s of %d in group %s of RayCluster %s (seed %d): %s", s.Mode, availability.Plural(len(t.chosen), "worker", "workers"),
		t.live, t.group, t.cluster, s.Seed, names(t.chosen)), s.probeTarget(t)); err != nil {
		return nil, chaos.Outcome{}, err
	}
	for i := range t.chosen {
		if err := c.KillPod(ctx, &t.chosen[i], kube.KillMode(s.Mode), true); err != nil {
			return nil, chaos.Outcome{}, killError(err)
		}
	}
	return s.run(ctx, c, t)
}

func names(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

// killError explains a refused kill: nothing was killed.
func killError(err error) error {
	var refused *kube.Refused
	if !errors.As(err, &refused) {
		return err
	}
	return fault.Errorf(fault.API, "%s: a PodDisruptionBudget blocks the eviction; nothing was killed (use %s delete to ignore PodDisruptionBudgets)",
		strings.TrimSuffix(refused.Error(), "."), SetMode)
}

func (s *Settings) run(ctx context.Context, c Cluster, t *target) (*Report, chaos.Outcome, error) {
	label := s.targetName()
	tr := follow.NewLosses(timeline.Event{Kind: timeline.WorkersKilled, Object: t.cluster}, timeline.KillRefused, label,
		t.chosen, func(*corev1.Pod) bool { return true })
	podSelector := ray.LabelCluster + "=" + t.cluster
	if s.RayService != "" {
		podSelector = ray.RayPodSelector // a RayService may replace the whole cluster
	}
	p := experiment.Probed{
		Watch:  kube.ClusterWatch{Namespace: s.Namespace, PodSelector: podSelector, RayService: s.RayService, Cluster: t.cluster},
		Serve:  experiment.EndpointsSpec{Namespace: s.Namespace, Service: t.service, PortName: t.portName},
		Undone: "nothing was killed",
		Disruption: experiment.Disruption{Probe: s.config(), Warmup: s.Warmup, After: s.After, UntilRecovered: s.UntilRecovered,
			Timeout: s.Timeout, What: fmt.Sprintf("%s %d of %d workers of group %s", s.Mode, len(t.chosen), t.live, t.group), Tracker: tr,
			Step: func(ctx context.Context) error { return kill(ctx, c, s, t, tr) }},
	}
	if t.service == "" {
		p.URL = experiment.TargetBase(s.Target)
	}
	res, err := s.Execute(ctx, c, p)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	r := s.buildReport(t, res, tr)
	outcome := chaos.Outcome{Passed: r.Verdict.Passed}
	switch {
	case res.Probe != nil && res.Probe.Interrupted:
		return r, outcome, fault.Errorf(fault.Interrupted, "interrupted: the report above covers what was seen")
	case res.WarmupFailed:
		return r, outcome, invalid("nothing was killed: %d of %s to %s failed; check %s/%s and that it answers 2xx",
			res.Warmup.Errors(), availability.Plural(int(res.Warmup.Requests()), "warm-up request", "warm-up requests"), s.probeTarget(t),
			experiment.SetTarget, experiment.SetService)
	case res.StepErr != nil:
		return r, outcome, killError(res.StepErr)
	case s.UntilRecovered && !res.Recovered:
		outcome = chaos.Outcome{Passed: false, Note: fault.Errorf(fault.API, "not recovered within %s %s", SetTimeout, s.Timeout)}
	}
	return r, outcome, nil
}

// kill kills every chosen worker at once, each while it is the pod that was read. It fails (and
// the run reports that nothing was killed) only when no kill was accepted.
func kill(ctx context.Context, c Cluster, s *Settings, t *target, tr *follow.Losses) error {
	var wg sync.WaitGroup
	errs := make([]error, len(t.chosen))
	for i := range t.chosen {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &t.chosen[i]
			tr.Requested(p, s.Mode, s.Now())
			err := killNow(ctx, c, p, kube.KillMode(s.Mode))
			var refused *kube.Refused
			switch {
			case err == nil:
				tr.Accepted(p, s.Now())
			case apierrors.IsNotFound(err):
				tr.GaveUp(p, "already gone", s.Now())
			case errors.As(err, &refused):
				tr.RefusedBy(p, refused.Budget, refused.Message, s.Now())
				tr.GaveUp(p, "refused", s.Now())
			default:
				tr.GaveUp(p, err.Error(), s.Now())
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			return nil
		}
	}
	return errs[0]
}

// killNow kills p as it is now: read again just before (the warm-up took seconds, and a status
// update changes its resourceVersion), and only while it is the same pod (uid), as head-kill does.
// A pod replaced meanwhile is NotFound: nothing of the new one is touched.
func killNow(ctx context.Context, c Cluster, p *corev1.Pod, mode kube.KillMode) error {
	now, err := c.GetPodByName(ctx, p.Namespace, p.Name)
	if err != nil {
		return err
	}
	if now.UID != p.UID {
		return apierrors.NewNotFound(corev1.Resource("pods"), p.Name)
	}
	return c.KillPod(ctx, now, mode, false)
}

// config is the probe's configuration (Validate has checked the settings).
func (s *Settings) config() probe.Config { return s.ConfigAt(s.Target) }

func (s *Settings) probeTarget(t *target) string { return s.ProbeTarget(t.service) }
