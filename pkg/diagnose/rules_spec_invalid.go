package diagnose

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleSpecInvalid: the operator refused the RayCluster's spec or metadata and reconciles nothing
// of it until they change: no head, no workers, no Services, no status. KubeRay v1.5.0 and v1.6.0
// validate at the start of every reconcile (ValidateRayClusterMetadata, ValidateRayClusterSpec),
// record a Warning Event InvalidRayClusterSpec ("The RayCluster spec is invalid <ns>/<name>:
// <error>") or InvalidRayClusterMetadata, and return without a requeue. v1.1.1 validates nothing.
// The refusal is current while status.observedGeneration is behind metadata.generation: every
// generation the operator accepts gets a status with its number.
const RuleSpecInvalid = "spec-invalid"

const (
	eventInvalidSpec     = "InvalidRayClusterSpec"
	eventInvalidMetadata = "InvalidRayClusterMetadata"
)

// specRefusal is the newest Event in which the operator refused c's current generation, or nil.
func (ix *index) specRefusal(c *clusterView) *corev1.Event {
	if c.rc.DeletionTimestamp != nil || c.rc.Status.ObservedGeneration >= c.rc.Generation {
		return nil
	}
	var newest *corev1.Event
	for _, ev := range ix.clusterEvents(c) {
		if ev.Type != corev1.EventTypeWarning || (ev.Reason != eventInvalidSpec && ev.Reason != eventInvalidMetadata) {
			continue
		}
		if _, last := eventTimes(ev); newest == nil || last.After(lastTime(newest)) {
			newest = ev
		}
	}
	return newest
}

func lastTime(ev *corev1.Event) time.Time {
	_, t := eventTimes(ev)
	return t
}

// specInvalid reports the operator's refusal, quoting its reason.
func specInvalid(ix *index, c *clusterView) []Finding {
	ev := ix.specRefusal(c)
	if ev == nil {
		return nil
	}
	why := ev.Message
	if _, after, ok := strings.Cut(why, c.rc.Namespace+"/"+c.rc.Name+": "); ok {
		why = after // "The RayCluster spec is invalid ns/name: <error>"
	}
	_, last := eventTimes(ev)
	what := "spec"
	if ev.Reason == eventInvalidMetadata {
		what = "metadata"
	}
	msg := fmt.Sprintf("%s: the operator refuses its %s and reconciles nothing of it (no head, no workers, no status) until it changes: %s (Event %s, %d time(s), last %s ago; generation %d, observed %d)",
		c.what(), what, strings.TrimRight(why, "."), ev.Reason, eventCount(ev), age(ix.s.Now.Sub(last)), c.rc.Generation, c.rc.Status.ObservedGeneration)
	remedy := "fix the " + what + " as the message says: kubectl edit raycluster " + c.rc.Name + " -n " + c.rc.Namespace +
		"; the operator reconciles the cluster again once it changes"
	if fix, ok := ix.operatorSideFix(why); ok {
		remedy = fix + ", or " + remedy
	}
	ev2 := map[string]string{"reason": ev.Reason, "generation": fmt.Sprint(c.rc.Generation), "observedGeneration": fmt.Sprint(c.rc.Status.ObservedGeneration)}
	return []Finding{c.finding(RuleSpecInvalid, state.ClusterRef(c.rc), msg, remedy, ev2)}
}

// featureGateRefusal is KubeRay's refusal of a field behind a feature gate that is off, in each
// of its wordings: v1.7.0's "spec.networkPolicy requires the RayClusterNetworkPolicy feature gate
// to be enabled" and "RayClusterHistoryServer feature gate is not enabled", v1.5.0's
// "RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy".
var featureGateRefusal = regexp.MustCompile(`requires the (\w+) feature gate|(\w+) feature gate (?:is not enabled|must be enabled)`)

// refusedGate is the feature gate a refusal names, "" for another refusal.
func refusedGate(why string) string {
	m := featureGateRefusal.FindStringSubmatch(why)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// operatorSideFix is the fix for a refusal the operator's own setup causes, not the spec: a
// feature gate that is off, or, with tlsOptions (KubeRay v1.7.0), cert-manager missing when
// the operator started: it looks for cert-manager's API once, at its start (main.go
// certManagerAPIAvailable), and refuses every such RayCluster until restarted.
func (ix *index) operatorSideFix(why string) (string, bool) {
	restart, edit := "restart the KubeRay operator", "the KubeRay operator's args"
	for _, op := range ix.operators {
		restart = "restart the KubeRay operator (kubectl rollout restart deploy/" + op.Name + " -n " + op.Namespace + ")"
		edit = "the KubeRay operator's args (kubectl edit deploy/" + op.Name + " -n " + op.Namespace + ")"
		break
	}
	switch {
	case strings.Contains(why, "requires cert-manager, but cert-manager is not installed"):
		return "install cert-manager, then " + restart + ": it looks for cert-manager once, at its start, and refuses every RayCluster with tlsOptions until then", true
	case refusedGate(why) != "":
		return "turn the feature gate on: add --feature-gates=" + refusedGate(why) + "=true to " + edit + ", or the Helm chart's featureGates", true
	}
	return "", false
}
