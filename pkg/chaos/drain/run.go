package drain

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

func isRay(p *corev1.Pod) bool { return ray.IsRayPod(p) }

// Run resolves the node and its pods, confirms, has the API server dry-run the cordon and each
// eviction (RBAC and admission; a budget's refusal is shown, not fatal: the run retries it), and
// drains under the probe. The node is uncordoned when the run ends, for any reason, unless it was
// cordoned before or KeepCordoned. It returns the report whenever the probe ran (with an error too
// when the run did not conclude) and the SLO's outcome.
func Run(ctx context.Context, c Cluster, s Settings) (*Report, chaos.Outcome, error) {
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := s.Ask(fmt.Sprintf("cordon node %s and %s its %s (%d Ray)", t.node, s.how(), availability.Plural(len(t.pods), "pod", "pods"), t.rayPods), s.probeTarget(t)); err != nil {
		return nil, chaos.Outcome{}, err
	}
	if err := serverDryRun(ctx, c, &s, t); err != nil {
		return nil, chaos.Outcome{}, err
	}
	return s.run(ctx, c, t)
}

// serverDryRun has the API server check the cordon and every eviction first: RBAC and admission
// fail here with nothing changed. A budget's 429 is what the run will meet and retry.
func serverDryRun(ctx context.Context, c Cluster, s *Settings, t *target) error {
	if _, _, err := c.CordonNode(ctx, t.node, true, true); err != nil {
		return err
	}
	for i := range t.pods {
		if err := c.DrainPod(ctx, &t.pods[i], !s.DisableEviction, s.GracePeriod, true); err != nil && !isRefused(err) {
			return err
		}
	}
	return nil
}

func isRefused(err error) bool {
	_, ok := err.(*kube.Refused)
	return ok
}

func (s *Settings) run(ctx context.Context, c Cluster, t *target) (*Report, chaos.Outcome, error) {
	tr := follow.NewLosses(timeline.Event{Kind: timeline.NodeCordoned, Object: t.node}, timeline.EvictionFailed, "node "+t.node,
		t.pods, func(p *corev1.Pod) bool { return isRay(p) && p.Namespace == s.Namespace })
	d := &drainer{c: c, s: s, t: t, tr: tr, now: s.Now}
	podSelector := ray.RayPodSelector
	p := experiment.Probed{
		// Every Ray pod of the namespace: KubeRay's replacements, and a RayService's new cluster.
		Watch:  kube.ClusterWatch{Namespace: s.Namespace, PodSelector: podSelector, Cluster: t.cluster},
		Serve:  experiment.EndpointsSpec{Namespace: s.Namespace, Service: t.service, PortName: t.portName},
		Undone: "nothing was cordoned",
		Disruption: experiment.Disruption{Probe: s.config(), Warmup: s.Warmup, After: s.After,
			UntilRecovered: s.UntilRecovered, Timeout: s.Timeout, What: "cordoned, then " + s.how(), Tracker: tr, Step: d.step},
	}
	if t.service == "" {
		p.URL = experiment.TargetBase(s.Target)
	}
	res, err := s.Execute(ctx, c, p)
	d.stop()
	uncordoned := s.uncordon(c, d, tr)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	r := s.buildReport(t, res, tr, uncordoned)
	outcome := chaos.Outcome{Passed: r.Verdict.Passed}
	switch {
	case res.Probe != nil && res.Probe.Interrupted:
		return r, outcome, fault.Errorf(fault.Interrupted, "interrupted: the report above covers what was seen; node %s %s", t.node, cordonWords(d, uncordoned, s))
	case res.WarmupFailed:
		return r, outcome, invalid("nothing was cordoned: %d of %s to %s failed; check %s/%s and that it answers 2xx",
			res.Warmup.Errors(), availability.Plural(int(res.Warmup.Requests()), "warm-up request", "warm-up requests"), s.probeTarget(t), SetTarget, SetService)
	case res.StepErr != nil:
		return r, outcome, res.StepErr
	}
	if held := r.Drain.StillRefused(); held != "" {
		// kubectl drain fails the same way: the node is not drained while a budget holds a pod.
		return r, outcome, fault.Errorf(fault.API, "node %s was not drained: %s; the node %s", t.node, held, cordonWords(d, uncordoned, s))
	}
	if s.UntilRecovered && !res.Recovered {
		outcome = chaos.Outcome{Passed: false, Note: fault.Errorf(fault.API, "not recovered within %s %s", SetTimeout, s.Timeout)}
	}
	return r, outcome, nil
}

// uncordon makes the node schedulable again when this run cordoned it, unless KeepCordoned. It
// runs whatever ended the run (Ctrl-C too), on a context of its own.
func (s *Settings) uncordon(c Cluster, d *drainer, tr *follow.Losses) bool {
	if !d.cordoned || s.KeepCordoned {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := c.CordonNode(ctx, d.t.node, false, false); err != nil {
		fmt.Fprintf(s.Warn, "warning: node %s is still cordoned: %v; run: kubectl uncordon %s\n", d.t.node, err, d.t.node)
		return false
	}
	tr.Note(timeline.Event{Kind: timeline.NodeUncordoned, At: s.Now(), Object: d.t.node})
	return true
}

func cordonWords(d *drainer, uncordoned bool, s *Settings) string {
	switch {
	case uncordoned:
		return "was uncordoned"
	case d.cordoned && s.KeepCordoned:
		return "stays cordoned (--keep-cordoned)"
	case d.cordoned:
		return "is still cordoned"
	}
	return "was not cordoned by this run"
}

func (s *Settings) buildReport(t *target, res *experiment.Result, tr *follow.Losses, uncordoned bool) *Report {
	rayPods := map[string]bool{}
	var heads []string
	for i := range t.pods {
		p := &t.pods[i]
		if isRay(p) {
			rayPods[p.Namespace+"/"+p.Name] = true
			if ray.IsHead(p) {
				heads = append(heads, p.Namespace+"/"+p.Name)
			}
		}
	}
	tl := tr.Timeline()
	in := availability.Input{Probe: res.Probe, Timeline: tl, SLO: s.SLO(), WarmupFailed: res.WarmupFailed}
	r := buildReport(in, s.reportSettings(t), t, uncordoned, rayPods)
	var atCordon []string
	if cordon, ok := tl.First(timeline.NodeCordoned, time.Time{}); ok {
		atCordon = tl.EndpointsAt(cordon.At)
	}
	r.Advice = advice(r, t, heads, s.HeadStateRule, atCordon, res.Recovered, s.UntilRecovered)
	return r
}

// config is the probe's configuration (Validate has checked the settings).
func (s *Settings) config() probe.Config { return s.ConfigAt(s.Target) }

func (s *Settings) probeTarget(t *target) string { return s.ProbeTarget(t.service) }

// reportSettings echo what was asked, for the report and the plan.
func (s *Settings) reportSettings(t *target) ReportSettings {
	cfg := s.config()
	rs := ReportSettings{Node: t.node, Namespace: s.Namespace, How: s.how(), Target: s.probeTarget(t), Method: cfg.Method,
		Path: experiment.ShownPath(cfg.Path), Rate: cfg.Rate, WarmupMs: s.Warmup.Milliseconds(), TimeoutMs: s.Timeout.Milliseconds(),
		RequestTimeout: s.RequestTimeout.Milliseconds(), KeepCordoned: s.KeepCordoned}
	if s.GracePeriod >= 0 {
		g := s.GracePeriod
		rs.GracePeriod = &g
	}
	if s.NodeOf.Name != "" {
		rs.NodeOf = nodeOfWords(s.NodeOf) + "'s " + roleWords(s.Role)
		if s.Role == RoleAny {
			rs.NodeOf = "a Ray pod of " + nodeOfWords(s.NodeOf)
		}
	}
	if s.UntilRecovered {
		rs.UntilRecovered = true
	} else {
		rs.AfterMs = s.After.Milliseconds()
	}
	return rs
}

func nodeOfWords(t ray.Target) string {
	if t.Kind == ray.KindRayService {
		return "rayservice/" + t.Name
	}
	return "raycluster/" + t.Name
}

// Plan is what a drain would do, judged by the API server's dry run of the cordon and each
// eviction; nothing was changed and no request was sent.
type Plan struct {
	APIVersion      string               `json:"apiVersion"`
	Kind            string               `json:"kind"`
	Settings        ReportSettings       `json:"settings"`
	AlreadyCordoned bool                 `json:"alreadyCordoned"`
	Evict           []PlanPod            `json:"evict"`
	Skipped         string               `json:"skipped,omitempty"`
	Budgets         []PlanBudget         `json:"budgets"`
	PlannedRequests int                  `json:"plannedRequests"`
	SLO             availability.PlanSLO `json:"slo"`
	ServerDryRun    string               `json:"serverDryRun"`
	Endpoints       []string             `json:"endpoints"`
	Refusals        []PlanRefusal        `json:"refusals"`
}

// PlanKind identifies a drain's dry-run plan (`--dry-run -o json`).
const PlanKind = "DrainPlan"

// PlanPod is one pod the drain would evict.
type PlanPod struct {
	Pod  string `json:"pod"`
	Ray  bool   `json:"ray"`
	Role string `json:"role,omitempty"` // head or worker, for a Ray pod
}

// PlanBudget is a PodDisruptionBudget over pods the drain would evict.
type PlanBudget struct {
	Name    string   `json:"name"` // NAMESPACE/NAME
	Allowed int32    `json:"disruptionsAllowed"`
	Pods    []string `json:"pods"`
	Words   string   `json:"words"`
}

// PlanRefusal is an eviction the API server's dry run refused (429): the run would retry it.
type PlanRefusal struct {
	Pod    string `json:"pod"`
	Budget string `json:"budget,omitempty"`
	Said   string `json:"said"`
}

// DryRun says exactly what a run would do: the node, the pods it would evict and those the drain
// library skips, the budgets over them and what the API server's dry run of each eviction said.
// Nothing is cordoned, no request is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) (*Plan, error) {
	s.DryRun = true
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, err
	}
	if _, _, err := c.CordonNode(ctx, t.node, true, true); err != nil {
		return nil, err
	}
	p := &Plan{APIVersion: schema.APIVersion, Kind: PlanKind, Settings: s.reportSettings(t), AlreadyCordoned: t.alreadyCordoned,
		Skipped: t.skipped, Evict: []PlanPod{}, Budgets: []PlanBudget{}, Refusals: []PlanRefusal{},
		PlannedRequests: probe.Planned(s.config().Rate, s.Warmup+s.Post()), SLO: s.PlanSLO(), ServerDryRun: "accepted"}
	for i := range t.pods {
		pod := &t.pods[i]
		pp := PlanPod{Pod: pod.Namespace + "/" + pod.Name, Ray: isRay(pod)}
		if pp.Ray {
			pp.Role = "worker"
			if ray.IsHead(pod) {
				pp.Role = "head"
			}
		}
		p.Evict = append(p.Evict, pp)
		err := c.DrainPod(ctx, pod, !s.DisableEviction, s.GracePeriod, true)
		if r, ok := err.(*kube.Refused); ok {
			p.Refusals = append(p.Refusals, PlanRefusal{Pod: pp.Pod, Budget: r.Budget, Said: refusedWords(r)})
		} else if err != nil {
			return nil, err
		}
	}
	for _, b := range t.budgets {
		p.Budgets = append(p.Budgets, PlanBudget{Name: b.Namespace + "/" + b.Name, Allowed: b.Allowed, Pods: b.Pods, Words: b.words()})
	}
	if p.Endpoints, err = experiment.PlanEndpoints(ctx, c, s.Namespace, t.service, t.portName); err != nil {
		return nil, err
	}
	return p, nil
}

// WritePlanText writes the plan for a person.
func WritePlanText(w interface{ Write([]byte) (int, error) }, p *Plan) error {
	var b strings.Builder
	s := p.Settings
	fmt.Fprintf(&b, "Dry run of a drain of node %s: nothing is cordoned or evicted and no request is sent.\n", s.Node)
	if s.NodeOf != "" {
		fmt.Fprintf(&b, "Node:         %s, which runs %s\n", s.Node, s.NodeOf)
	}
	if p.AlreadyCordoned {
		fmt.Fprintf(&b, "Cordon:       already cordoned; it stays cordoned after the run\n")
	} else if s.KeepCordoned {
		fmt.Fprintf(&b, "Cordon:       would cordon it, and leave it cordoned (--keep-cordoned)\n")
	} else {
		fmt.Fprintf(&b, "Cordon:       would cordon it, and uncordon it when the run ends\n")
	}
	fmt.Fprintf(&b, "Would %s %s:\n", s.How, availability.Plural(len(p.Evict), "pod", "pods"))
	for _, e := range p.Evict {
		role := "not a Ray pod"
		if e.Ray {
			role = "Ray " + e.Role
		}
		fmt.Fprintf(&b, "  %s (%s)\n", e.Pod, role)
	}
	if p.Skipped != "" {
		fmt.Fprintf(&b, "Skipped:      %s\n", p.Skipped)
	}
	if len(p.Budgets) == 0 {
		fmt.Fprintf(&b, "Budgets:      no PodDisruptionBudget covers these pods (KubeRay creates none, kuberay #5004)\n")
	}
	for _, bu := range p.Budgets {
		fmt.Fprintf(&b, "Budget:       %s\n", bu.Words)
	}
	for _, r := range p.Refusals {
		fmt.Fprintf(&b, "Refused now:  %s: %s (the run asks again every %s until --timeout)\n", r.Pod, r.Said, RetryRefused)
	}
	fmt.Fprintf(&b, "Would probe:  %s %s%s at %v/s, warm-up %dms (the node is cordoned only if every warm-up request succeeds), about %s\n",
		s.Method, s.Target, s.Path, s.Rate, s.WarmupMs, availability.Plural(p.PlannedRequests, "request", "requests"))
	if len(p.Endpoints) > 0 {
		fmt.Fprintf(&b, "Endpoints:    %s\n", strings.Join(p.Endpoints, ", "))
	}
	fmt.Fprintf(&b, "SLO:          %s\n", p.SLO)
	if len(p.Refusals) == 0 {
		fmt.Fprintf(&b, "The API server accepted a dry run of the cordon and of each %s.\n", s.How)
	} else {
		fmt.Fprintf(&b, "The API server accepted a dry run of the cordon and of %d of %d %ss; a budget refused the others now.\n", len(p.Evict)-len(p.Refusals), len(p.Evict), s.How)
	}
	_, err := w.Write([]byte(b.String()))
	return err
}
