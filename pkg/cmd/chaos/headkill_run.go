package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// headKillTarget is what Run resolved before anything is changed.
type headKillTarget struct {
	cluster  string // the RayCluster whose head is killed
	head     *corev1.Pod
	service  string // probed Service, "" for a URL
	port     int    // Service port
	portName string
	ready    []kube.ReadyEndpoint // read for a dry run only
}

// Run resolves the target, confirms, and runs the kill under the probe.
func (o *HeadKillOptions) Run(cmd *cobra.Command) error {
	ctx := cmdutil.Context(cmd)
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	t, err := o.resolve(ctx, c)
	if err != nil {
		return err
	}
	if o.dryRun {
		return o.printDryRun(ctx, c, t)
	}
	if err := o.confirmKill(t); err != nil {
		return err
	}
	// The API server checks RBAC and PodDisruptionBudgets without deleting: a kill that cannot
	// happen is refused before any request is sent.
	if err := c.KillPod(ctx, t.head, o.killMode, true); err != nil {
		return o.killError(err, t)
	}
	advice := o.doctorAdvice(ctx, c)
	return o.run(ctx, c, t, advice)
}

// resolve finds the cluster, its live head and the probe's Service with ONE read of each.
func (o *HeadKillOptions) resolve(ctx context.Context, c *kube.Clients) (*headKillTarget, error) {
	t := &headKillTarget{cluster: o.cluster}
	if o.rayService != "" {
		rs, err := c.GetRayService(ctx, o.namespace, o.rayService)
		if err != nil {
			return nil, err
		}
		t.cluster = rs.Status.ActiveServiceStatus.RayClusterName
		if t.cluster == "" {
			return nil, exit.Errorf(exit.NotFound, "RayService %s/%s has no active RayCluster yet (status.activeServiceStatus.rayClusterName is empty): wait until it serves", o.namespace, o.rayService)
		}
		if o.service == "" {
			o.service = diagnose.ServeServiceName(o.rayService)
		}
		if !o.servicePortSet && o.target == "" {
			o.port = DefaultServePort
		}
	} else if _, err := c.GetRayCluster(ctx, o.namespace, o.cluster); err != nil {
		return nil, err
	}
	selector := fmt.Sprintf("%s=%s,%s=head", headkill.LabelCluster, t.cluster, headkill.LabelNodeType)
	pods, err := c.ListPodsMatching(ctx, o.namespace, selector)
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil, exit.Errorf(exit.NotFound, "RayCluster %s/%s has no live head pod to kill; list its pods with: kubectl get pods -n %s -l %s",
			o.namespace, t.cluster, o.namespace, selector)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	t.head = &live[0]
	if o.target != "" {
		return t, nil
	}
	svc, err := c.GetService(ctx, o.namespace, o.service)
	if err != nil {
		return nil, err
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprint(p.Port))
		if int(p.Port) == o.port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			t.portName = p.Name
			t.port = o.port
		}
	}
	if t.port == 0 {
		return nil, exit.Usagef("Service %s/%s has no TCP port %d (its ports: %s): pass --port", o.namespace, o.service, o.port, strings.Join(ports, ", "))
	}
	t.service = o.service
	if !o.dryRun {
		// A run reads the endpoints with its watch (one LIST, then changes), and refuses there
		// if none is ready, before any request or kill.
		return t, nil
	}
	if t.ready, err = c.ListReadyEndpoints(ctx, o.namespace, t.service, t.portName); err != nil {
		return nil, err
	}
	if len(t.ready) == 0 {
		return nil, noReadyEndpoints(o.namespace, t.service)
	}
	return t, nil
}

func noReadyEndpoints(ns, svc string) error {
	return exit.Errorf(exit.NotFound, "Service %s/%s has no ready endpoints, so there is nothing to probe and nothing was killed; check with: kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s",
		ns, svc, ns, svc)
}

// killError turns a refused kill into its one line. Nothing was killed in every case.
func (o *HeadKillOptions) killError(err error, t *headKillTarget) error {
	var refused *kube.Refused
	if errors.As(err, &refused) {
		return exit.Errorf(exit.API, "%s: a PodDisruptionBudget blocks the eviction; nothing was killed (use --mode delete to ignore PodDisruptionBudgets)",
			strings.TrimSuffix(refused.Error(), "."))
	}
	if exit.Has(err) {
		return err
	}
	return exit.Errorf(exit.API, "cannot %s head pod %s/%s: %v; nothing was killed", o.mode, t.head.Namespace, t.head.Name, err)
}

func (o *HeadKillOptions) targetName() string {
	if o.rayService != "" {
		return "rayservice/" + o.rayService
	}
	return o.cluster
}

func (o *HeadKillOptions) probeTarget(t *headKillTarget) string {
	if t.service != "" {
		return fmt.Sprintf("service/%s:%d", t.service, t.port)
	}
	return o.targetBase
}

func (o *HeadKillOptions) killWhat(t *headKillTarget) string {
	switch o.killMode {
	case kube.KillForce:
		return "force-delete (grace period 0)"
	case kube.KillEvict:
		return "evict (Eviction API, PodDisruptionBudgets apply)"
	}
	grace := "the pod's"
	if g := t.head.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = fmt.Sprintf("%ds", *g)
	}
	return fmt.Sprintf("delete (grace period %s)", grace)
}

func (o *HeadKillOptions) afterText() string {
	if o.untilRecovered {
		return fmt.Sprintf("until recovered, at most %s", o.timeout)
	}
	return o.after.String()
}

func (o *HeadKillOptions) slo() string {
	var s []string
	if o.maxErrorsSet {
		s = append(s, fmt.Sprintf("max-errors %d", o.maxErrors))
	}
	if o.minAvailSet {
		s = append(s, fmt.Sprintf("min-availability %v%%", o.minAvailability))
	}
	if len(s) == 0 {
		return "none (exit 0 whatever happens)"
	}
	return strings.Join(s, ", ")
}

// printDryRun says exactly what a run would do. The kill is dry-run on the API server (RBAC,
// admission and PodDisruptionBudgets are checked); no port-forward is opened, no request is sent.
func (o *HeadKillOptions) printDryRun(ctx context.Context, c *kube.Clients, t *headKillTarget) error {
	out := o.f.IOStreams.Out
	fmt.Fprintf(out, "Dry run of a head kill of %s in namespace %s: nothing is killed and no request is sent.\n", o.targetName(), o.namespace)
	fmt.Fprintf(out, "Would kill:   pod %s (head of RayCluster %s) by %s\n", t.head.Name, t.cluster, o.killWhat(t))
	if t.service != "" {
		names := make([]string, len(t.ready))
		for i, e := range t.ready {
			names[i] = fmt.Sprintf("%s:%d", e.Pod, e.Port)
		}
		fmt.Fprintf(out, "Would probe:  %s %s%s at %v/s through a port-forward to each of %d ready endpoints: %s\n",
			o.probeCfg.Method, o.probeTarget(t), shownPath(o.probeCfg.Path), o.probeCfg.Rate, len(t.ready), strings.Join(names, ", "))
	} else {
		fmt.Fprintf(out, "Would probe:  %s %s%s at %v/s\n", o.probeCfg.Method, o.targetBase, shownPath(o.probeCfg.Path), o.probeCfg.Rate)
	}
	fmt.Fprintf(out, "Schedule:     warm-up %s (the kill happens only if every warm-up request succeeds), then probe %s; request timeout %s; about %d requests (at most %d if the warm-up's last answers and the kill take their whole allowance)\n",
		o.warmup, o.afterText(), o.requestTimeout, probe.Planned(o.probeCfg.Rate, o.warmup+o.durationAfter()),
		probe.Planned(o.probeCfg.Rate, headkill.ScheduleLength(o.warmup, o.requestTimeout, o.durationAfter())))
	fmt.Fprintf(out, "SLO:          %s\n", o.slo())
	if err := c.KillPod(ctx, t.head, o.killMode, true); err != nil {
		return o.killError(err, t)
	}
	fmt.Fprintf(out, "The API server accepted a dry run of the kill of pod %s/%s.\n", t.head.Namespace, t.head.Name)
	return nil
}

func (o *HeadKillOptions) durationAfter() time.Duration {
	if o.untilRecovered {
		return o.timeout
	}
	return o.after
}

// shownPath is the probed path as plans and reports print it: "/" when empty, and the value of
// any query parameter named like a secret (token, api_key, password, key, sig...) replaced,
// since reports are kept as CI artifacts. The probe itself sends the path as given.
func shownPath(p string) string {
	if p == "" {
		return "/"
	}
	path, query, ok := strings.Cut(p, "?")
	if !ok {
		return p
	}
	params := strings.Split(query, "&")
	for i, kv := range params {
		k, _, hasValue := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && (diagnose.IsSecretName(name) || secretParams[strings.ToLower(name)]) {
			params[i] = k + "=" + diagnose.Redacted
		}
	}
	return path + "?" + strings.Join(params, "&")
}

// secretParams are query parameter names that carry credentials without saying so.
var secretParams = map[string]bool{"key": true, "sig": true, "signature": true, "code": true}

// confirmKill asks on a terminal and refuses without --yes anywhere else.
func (o *HeadKillOptions) confirmKill(t *headKillTarget) error {
	if o.yes {
		return nil
	}
	what := fmt.Sprintf("%s head pod %s/%s of RayCluster %s", o.killWhat(t), t.head.Namespace, t.head.Name, t.cluster)
	if !o.f.StdinIsTerminal() {
		return exit.Errorf(exit.NotConfirmed, "refusing to %s without --yes: pass --yes, or run in a terminal to confirm (--dry-run shows the plan)", what)
	}
	fmt.Fprintf(o.f.IOStreams.ErrOut, "This will %s while probing %s at %v/s.\nContinue? [y/N] ", what, o.probeTarget(t), o.probeCfg.Rate)
	var answer string
	_, _ = fmt.Fscanln(o.f.IOStreams.In, &answer)
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return exit.Errorf(exit.NotConfirmed, "not confirmed: nothing was killed")
	}
	return nil
}

// doctorAdvice is doctor's RayService rules' findings for the target, read before the kill.
// Without permission to read what doctor reads there is no doctor advice; the run goes on.
func (o *HeadKillOptions) doctorAdvice(ctx context.Context, c *kube.Clients) []report.Advice {
	snap, err := c.LoadSnapshot(ctx, kube.SnapshotQuery{Namespace: o.namespace, Now: o.f.Now()})
	if err != nil {
		fmt.Fprintf(o.f.IOStreams.ErrOut, "warning: no doctor advice: %v\n", err)
		return nil
	}
	target := &diagnose.Target{Kind: "RayCluster", Name: o.cluster}
	if o.rayService != "" {
		target = &diagnose.Target{Kind: "RayService", Name: o.rayService}
	}
	return adviceFrom(diagnose.DiagnoseTarget(snap, diagnose.DefaultOptions(), target).Findings)
}

// adviceRules are doctor's rules about 502s during a head restart.
var adviceRules = map[string]bool{
	diagnose.RuleServeHeadInService: true,
	diagnose.RuleServeHeadHasCPUs:   true,
	diagnose.RuleGCSFTOff:           true,
}

func adviceFrom(fs []diagnose.Finding) []report.Advice {
	var out []report.Advice
	for _, f := range fs {
		if adviceRules[f.Rule] {
			out = append(out, report.Advice{Source: "doctor", Rule: f.Rule, Text: f.Message + "; fix: " + f.Remedy})
		}
	}
	return out
}

// signalContext ends on Ctrl-C or SIGTERM; tests replace it.
var signalContext = func(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
