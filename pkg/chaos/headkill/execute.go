package headkill

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// run starts the watches and the probe's endpoints, runs the kill under the probe, and builds
// the report.
func (s *Settings) run(ctx context.Context, c Cluster, t *target, advice []report.Advice) (*report.Report, chaos.Outcome, error) {
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
		return r, outcome, chaos.Errorf(chaos.Interrupted, "interrupted: the report above covers what was seen")
	case res.WarmupFailed:
		return r, outcome, warmupError(s.probeTarget(t), res.Warmup)
	case res.StepErr != nil:
		return r, outcome, killError(res.StepErr)
	case s.UntilRecovered && !res.Recovered:
		outcome = chaos.Outcome{Passed: false, Note: chaos.Errorf(chaos.Failed, "not recovered within %s %s", SetTimeout, s.Timeout)}
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
		w.Errors(), report.Plural(int(w.Requests()), "warm-up request", "warm-up requests"), target, strings.Join(how, ", "), SetTarget, SetService)
}

// killHead reads the head again right before the kill, so the delete's uid and resourceVersion
// preconditions are current after the warm-up; a head replaced meanwhile is not killed.
func killHead(ctx context.Context, c Cluster, head *corev1.Pod, mode kube.KillMode) error {
	now, err := c.GetPodByName(ctx, head.Namespace, head.Name)
	if err != nil {
		return err
	}
	if now.UID != head.UID {
		// Not a failed SLO: none was measured. The head that was the target no longer exists.
		return chaos.Errorf(chaos.NotFound, "head pod %s/%s was replaced during the warm-up (uid %s, was %s); nothing was killed; run again to target the new head",
			now.Namespace, now.Name, now.UID, head.UID)
	}
	return c.KillHeadPod(ctx, now, mode, false)
}

// reportSettings echo what was asked, for the report and the dry-run plan.
func (s *Settings) reportSettings(t *target) report.Settings {
	rs := report.Settings{Cluster: s.targetName(), Namespace: s.Namespace, Mode: s.Mode, Target: s.probeTarget(t),
		Method: s.config().Method, Path: experiment.ShownPath(s.config().Path), Rate: s.config().Rate, WarmupMs: s.Warmup.Milliseconds(),
		RequestTimeout: s.RequestTimeout.Milliseconds()}
	if s.UntilRecovered {
		rs.UntilRecovered, rs.TimeoutMs = true, s.Timeout.Milliseconds()
	} else {
		rs.AfterMs = s.After.Milliseconds()
	}
	return rs
}

func (s *Settings) buildReport(t *target, res *experiment.Result, tr *Tracker, advice []report.Advice) *report.Report {
	return report.Build(report.Input{Settings: s.reportSettings(t), Probe: res.Probe, Timeline: tr.Timeline(), SLO: s.SLO(), Advice: advice,
		WarmupFailed: res.WarmupFailed})
}
