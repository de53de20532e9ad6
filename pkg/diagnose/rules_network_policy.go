package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleNetworkPolicyBlocksDNS is an invariant between the NetworkPolicies of a namespace and the
// Ray workers they select: a worker finds its head by the head Service's DNS name, so a policy
// that isolates a worker's egress must let DNS through. KubeRay v1.7.0's spec.networkPolicy
// (mode DenyAll by default) does not add DNS of itself, and says so in its API's comments; a
// namespace's default-deny egress policy does the same. The workers then wait in wait-gcs-ready
// for ever, and nothing else reports them: they are Pending, scheduled, and not failing.
const RuleNetworkPolicyBlocksDNS = "network-policy-blocks-dns"

// networkPolicyBlocksDNS reports, per worker group, egress isolated without DNS. Live, a group is
// reported only when its workers show it: scheduled, not Ready for WorkersNotReadyWindow, with
// their init containers not done or their Ray container restarted (a cluster whose network
// plugin does not enforce policies works, and is not reported). Read from a file
// (Options.SpecOnly), the labels KubeRay puts on each group's pods are judged against the
// NetworkPolicy documents and the policies KubeRay would make of spec.networkPolicy. The head
// is not judged: it reaches nothing by name to start.
func networkPolicyBlocksDNS(ix *index, c *clusterView) []Finding {
	rc := c.rc
	if len(ix.s.NetworkPolicies) == 0 || rc.DeletionTimestamp != nil || c.suspended() {
		return nil
	}
	var out []Finding
	if ix.opts.SpecOnly {
		for _, g := range groupPodLabels(c) {
			if g.nodeType != ray.NodeTypeWorker {
				continue
			}
			if e := ray.EgressOf(ix.s.NetworkPolicies, rc.Namespace, g.labels); e.DNSBlocked() {
				out = append(out, dnsBlockedFinding(ix, c, g.group, e, nil, 0))
			}
		}
		return out
	}
	type group struct {
		egress  ray.Egress
		waiting []*corev1.Pod
		longest time.Duration
	}
	groups := map[string]*group{}
	for _, w := range c.workers {
		since, ok := waitingForHead(ix, w)
		if !ok {
			continue
		}
		e := ray.EgressOf(ix.s.NetworkPolicies, rc.Namespace, w.Labels)
		if !e.DNSBlocked() {
			continue
		}
		name := w.Labels[ray.LabelGroup]
		g := groups[name]
		if g == nil {
			g = &group{egress: e}
			groups[name] = g
		}
		g.waiting = append(g.waiting, w)
		g.longest = max(g.longest, ix.s.Now.Sub(since))
	}
	for _, name := range sortedKeys(groups) {
		g := groups[name]
		out = append(out, dnsBlockedFinding(ix, c, name, g.egress, g.waiting, g.longest))
	}
	return out
}

// waitingForHead says whether worker w has waited WorkersNotReadyWindow as a worker that cannot
// reach its head waits, and since when: on a node, not Ready, its init containers not done
// (wait-gcs-ready asks for the head until it answers) or its Ray container restarted (ray start
// gives up when the head's name does not resolve).
func waitingForHead(ix *index, w *corev1.Pod) (time.Time, bool) {
	if !ray.Live(w) || w.Spec.NodeName == "" || podutils.IsPodReady(w) {
		return time.Time{}, false
	}
	if initDone(w) && restarts(w) == 0 {
		return time.Time{}, false
	}
	since := w.CreationTimestamp.Time
	if rc := podCondition(w, corev1.PodReady); rc != nil && rc.LastTransitionTime.After(since) {
		since = rc.LastTransitionTime.Time
	}
	return since, ix.s.Now.Sub(since) > ix.opts.WorkersNotReadyWindow
}

// initDone says whether every init container of w has completed, by their statuses (the
// loader keeps those, not the Initialized condition).
func initDone(w *corev1.Pod) bool {
	for _, cs := range w.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t == nil || t.ExitCode != 0 {
			return false
		}
	}
	return true
}

// dnsBlocked says whether worker w waits for its head because its egress is isolated without
// DNS: workersNotReady leaves such workers to this rule, whose remedy fits.
func dnsBlocked(ix *index, w *corev1.Pod) bool {
	if _, waiting := waitingForHead(ix, w); !waiting || len(ix.s.NetworkPolicies) == 0 {
		return false
	}
	return ray.EgressOf(ix.s.NetworkPolicies, w.Namespace, w.Labels).DNSBlocked()
}

// dnsBlockedFinding words the finding of group; waiting and longest are the live workers that
// show it (none read from a file). A finding about KubeRay's own policies is about the
// RayCluster's spec.networkPolicy, where it is fixed; one about a user's policy names it.
func dnsBlockedFinding(ix *index, c *clusterView, group string, e ray.Egress, waiting []*corev1.Pod, longest time.Duration) Finding {
	rc := c.rc
	policies := policiesNamed(ix.s.NetworkPolicies, rc.Namespace, e.Isolating)
	var kuberay, theirs []string
	mode := ""
	for _, p := range policies {
		if !ray.MadeByKubeRay(p) || p.Labels[ray.LabelCluster] != rc.Name {
			theirs = append(theirs, p.Name)
			continue
		}
		kuberay = append(kuberay, p.Name)
		mode = ray.NetworkPolicyDenyAllEgress
		if slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			mode = ray.NetworkPolicyDenyAll
		}
	}
	verb := "isolates"
	what := "NetworkPolicy " + strings.Join(e.Isolating, ", ")
	if len(e.Isolating) > 1 {
		verb, what = "isolate", "NetworkPolicies "+strings.Join(e.Isolating, ", ")
	}
	cause := fmt.Sprintf("%s %s their egress and no egress rule lets DNS (port 53) through, so they cannot resolve the head Service's name", what, verb)
	ev := map[string]string{"group": group, "policies": strings.Join(e.Isolating, ",")}
	msg := fmt.Sprintf("the workers of group %s will wait for their head for ever: %s", orNone(group), cause)
	if waiting != nil {
		names := make([]string, len(waiting))
		for i, w := range waiting {
			names[i] = w.Name
		}
		sort.Strings(names)
		running, desired := groupCounts(c, group)
		ev["workers"], ev["waiting"], ev["age"], ev["running"] = strings.Join(names, ","), fmt.Sprint(len(waiting)), age(longest), fmt.Sprintf("%d/%s", running, desired)
		msg = fmt.Sprintf("%d worker(s) of group %s have waited up to %s for their head: %s", len(waiting), orNone(group), age(longest), cause)
	}
	var fixes []string
	obj := state.ClusterRef(rc)
	if len(kuberay) > 0 {
		ev["kuberayPolicies"], ev["mode"] = strings.Join(kuberay, ","), mode
		fixes = append(fixes, "add a DNS rule under spec.networkPolicy.worker.egressRules (or the group's entry of spec.networkPolicy.workerGroups), e.g. to: "+
			"[{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}, podSelector: {matchLabels: {k8s-app: kube-dns}}}], "+
			"ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}] (KubeRay's network-policy-deny-all sample); the operator rewrites "+strings.Join(kuberay, ", "))
	} else {
		p := policies[0]
		obj = state.Ref{Kind: "NetworkPolicy", Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}
	}
	if len(theirs) > 0 {
		fixes = append(fixes, "add such an egress rule to "+strings.Join(theirs, ", ")+": kubectl edit networkpolicy "+theirs[0]+" -n "+rc.Namespace)
	}
	f := c.finding(RuleNetworkPolicyBlocksDNS, obj, msg, strings.Join(fixes, "; "), ev)
	if len(kuberay) > 0 {
		f.Field = "spec.networkPolicy"
	}
	return f
}

// policiesNamed are the policies of namespace with these names, in their order.
func policiesNamed(all []networkingv1.NetworkPolicy, namespace string, names []string) []*networkingv1.NetworkPolicy {
	out := make([]*networkingv1.NetworkPolicy, 0, len(names))
	for _, n := range names {
		for i := range all {
			if all[i].Namespace == namespace && all[i].Name == n {
				out = append(out, &all[i])
				break
			}
		}
	}
	return out
}
