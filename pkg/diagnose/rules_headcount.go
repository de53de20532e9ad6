package diagnose

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// headCountRules: a RayCluster has exactly one head pod, unless suspended or being deleted.
func headCountRules(ix *index, c *clusterView) []Finding {
	if c.suspended() || c.rc.DeletionTimestamp != nil {
		return nil
	}
	if len(c.heads) == 0 {
		if _, off := ix.restartDisabled(c); off {
			return nil // by design: head-restart-disabled says so, without head-missing's remedy
		}
		if ix.specRefusal(c) != nil {
			return nil // the operator refuses the spec: spec-invalid says why no head comes
		}
		created := ix.s.Now.Sub(c.rc.CreationTimestamp.Time)
		if created <= ix.opts.OperatorGrace {
			return nil // the operator has not had its chance yet
		}
		ev := map[string]string{"age": age(created)}
		msg := fmt.Sprintf("%s has no head pod", c.what())
		remedy := "read " + ix.operatorLogs() + " and kubectl describe raycluster " + c.rc.Name + " -n " + c.rc.Namespace
		if cond := meta.FindStatusCondition(c.rc.Status.Conditions, string(rayv1.RayClusterReplicaFailure)); cond != nil && cond.Status == "True" {
			ev["replicaFailure"] = cond.Message
		}
		if r := ix.refusalFor(c, "head", ""); r != nil {
			// The operator tries and the API server refuses (quota, LimitRange, Pod Security, a
			// webhook): its words explain the missing head better than the operator's log.
			ev["refusal"], ev["refusalSource"] = r.text, r.source()
			msg += ": the API server refuses the operator's head pod: " + r.describe(ix.s.Now)
			remedy = r.remedy(c)
		} else if m := ev["replicaFailure"]; m != "" {
			msg += "; the operator reports: " + m
		}
		verdict, op := ix.operatorVerdict()
		if verdict == opAbsent {
			msg += "; " + op + " was found"
			remedy = "start the KubeRay operator: it creates the head"
		}
		return []Finding{c.finding(RuleHeadMissing, state.ClusterRef(c.rc), msg, remedy, ev)}
	}
	// Pods inside their deletion grace period are leaving; only the others compete for head.
	var counted []*corev1.Pod
	for _, h := range c.heads {
		if h.DeletionTimestamp == nil || ix.s.Now.Sub(h.DeletionTimestamp.Time) > ix.opts.TerminatingMargin {
			counted = append(counted, h)
		}
	}
	if len(counted) < 2 {
		return nil
	}
	keep := counted[0]
	for _, h := range counted[1:] {
		if better(h, keep) {
			keep = h
		}
	}
	var names []string
	for _, h := range counted {
		names = append(names, h.Name)
	}
	var out []Finding
	for _, h := range counted {
		if h == keep {
			continue
		}
		ev := map[string]string{"pod": h.Name, "node": h.Spec.NodeName, "phase": string(h.Status.Phase), "heads": strings.Join(names, ","), "kept": keep.Name}
		msg := fmt.Sprintf("%s has %d head pods (%s); %s is an extra head (%s)", c.what(), len(counted), strings.Join(names, ", "), h.Name, podState(h))
		remedy := "keep " + keep.Name + "; remove the extra head: `" + healCmd(c) + "`"
		if !ray.Terminal(h) && h.DeletionTimestamp == nil {
			remedy = "two live heads split the cluster: delete the one workers are not connected to (kubectl delete pod " + h.Name + " -n " + h.Namespace + ") after checking with kubectl ray doctor -o wide"
		}
		out = append(out, c.finding(RuleHeadDuplicate, state.PodRef(h), msg, remedy, ev))
	}
	return out
}

// better prefers a working head, then the newest one: the old one is the leftover.
func better(a, b *corev1.Pod) bool {
	if ray.RunningReady(a) != ray.RunningReady(b) {
		return ray.RunningReady(a)
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.After(b.CreationTimestamp.Time)
	}
	return a.Name < b.Name
}

// podState is a short description: "Running, Ready", "Failed (Evicted)", "Terminating".
func podState(p *corev1.Pod) string {
	switch {
	case p.DeletionTimestamp != nil:
		return "Terminating"
	case p.Status.Reason != "":
		return string(p.Status.Phase) + " (" + p.Status.Reason + ")"
	case p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p):
		return "Running, Ready"
	case p.Status.Phase == corev1.PodRunning:
		return "Running, not Ready"
	}
	return string(p.Status.Phase)
}
