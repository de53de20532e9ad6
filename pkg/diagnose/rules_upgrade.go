package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleRayServiceUpgradeStuck: a RayService upgrade whose pending cluster never gets a Ready head
// (kuberay #5088). Traffic stays on the active cluster, and nothing in KubeRay gives up on the
// pending one.
const RuleRayServiceUpgradeStuck = "rayservice-upgrade-stuck"

// upgradeStuck runs on the pending cluster of a RayService. It needs the UpgradeInProgress
// condition, which KubeRay writes since v1.3.0 (True exactly while both an active and a pending
// cluster are named): v1.1.1 writes no conditions, and without a start time of the upgrade the
// rule cannot tell a slow upgrade from a stuck one, so it stays silent there.
func upgradeStuck(ix *index, c *clusterView) []Finding {
	rs := c.service
	if rs == nil || rs.Status.PendingServiceStatus.RayClusterName != c.rc.Name {
		return nil
	}
	cond := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.UpgradeInProgress))
	if cond == nil || cond.Status != metav1.ConditionTrue {
		return nil
	}
	upgrading := ix.s.Now.Sub(cond.LastTransitionTime.Time)
	if upgrading < ix.opts.UpgradeStuckAfter {
		return nil
	}
	why, ready := pendingHeadState(c)
	if ready {
		// The head is Ready; what holds the switch then is Serve: KubeRay moves traffic only once
		// every application of the pending cluster is RUNNING.
		if why = pendingAppsState(rs); why == "" {
			return nil
		}
	}
	active := rs.Status.ActiveServiceStatus.RayClusterName
	ev := map[string]string{
		"upgradingFor":     age(upgrading),
		"upgradeStarted":   cond.LastTransitionTime.UTC().Format(time.RFC3339),
		"pendingCluster":   c.rc.Name,
		"activeCluster":    orNone(active),
		"pendingHeadState": why,
	}
	if hc := meta.FindStatusCondition(c.rc.Status.Conditions, string(rayv1.HeadPodReady)); hc != nil {
		ev["headPodReady"] = string(hc.Status)
	}
	rsRef := state.Ref{Kind: "RayService", Namespace: rs.Namespace, Name: rs.Name, UID: string(rs.UID)}
	msg := fmt.Sprintf("RayService %s has been upgrading for %s (UpgradeInProgress=True since %s), but its pending RayCluster %s %s; "+
		"traffic stays on the active cluster %s and KubeRay never gives up on the pending one (kuberay #5088)",
		key(rs.Namespace, rs.Name), age(upgrading), ev["upgradeStarted"], c.rc.Name, why, orNone(active))
	remedy := fmt.Sprintf("fix what keeps the head of RayCluster %s from being Ready (its head findings in this report; "+
		"kubectl ray doctor raycluster/%s -n %s), or revert the RayService change that started the upgrade",
		c.rc.Name, c.rc.Name, c.rc.Namespace)
	if ready {
		ev["pendingApps"] = why
		remedy = fmt.Sprintf("read why the Serve applications do not start on RayCluster %s (kubectl get rayservice %s -n %s -o jsonpath='{.status.pendingServiceStatus}'; "+
			"the Serve logs on its head), or revert the RayService change that started the upgrade", c.rc.Name, rs.Name, rs.Namespace)
	}
	return []Finding{c.finding(RuleRayServiceUpgradeStuck, rsRef, msg, remedy, ev)}
}

// pendingAppsState says which Serve applications of the pending cluster are not RUNNING
// ("has a Ready head, but its Serve applications are not running: fruit_app DEPLOYING, ..."), or ""
// when every one reported is RUNNING. An upgrade with no application status reported yet is not
// judged: the operator may not have submitted them, and the API does not say why.
func pendingAppsState(rs *rayv1.RayService) string {
	var notRunning []string
	for name, app := range rs.Status.PendingServiceStatus.Applications {
		if app.Status != rayv1.ApplicationStatusEnum.RUNNING {
			st := orNone(app.Status)
			if app.Message != "" {
				st += " (" + oneLineMessage(app.Message) + ")"
			}
			notRunning = append(notRunning, name+" "+st)
		}
	}
	if len(notRunning) == 0 {
		return ""
	}
	sort.Strings(notRunning)
	return "has a Ready head, but its Serve applications are not running: " + strings.Join(notRunning, ", ")
}

// pendingHeadState says why the cluster has no Ready head ("has no head pod", "head pod x is
// Pending (Unschedulable: ...)"), with ready true when a head is Running and Ready and the
// cluster's HeadPodReady condition (when written) agrees.
func pendingHeadState(c *clusterView) (string, bool) {
	hc := meta.FindStatusCondition(c.rc.Status.Conditions, string(rayv1.HeadPodReady))
	var states []string
	for _, h := range c.heads {
		if ray.RunningReady(h) && (hc == nil || hc.Status == metav1.ConditionTrue) {
			return "", true
		}
		states = append(states, h.Name+" is "+headNotReadyDetail(h))
	}
	var why string
	if len(states) == 0 {
		why = "has no head pod"
	} else {
		why = "has no Ready head: head pod " + strings.Join(states, ", ")
	}
	if hc != nil && hc.Status != metav1.ConditionTrue {
		why += fmt.Sprintf(" (HeadPodReady=%s", hc.Status)
		if hc.Reason != "" {
			why += ", " + hc.Reason
		}
		why += ")"
	}
	return why, false
}

// headNotReadyDetail is podState with the scheduler's or a container's reason when there is one.
func headNotReadyDetail(p *corev1.Pod) string {
	s := podState(p)
	if sc := podCondition(p, corev1.PodScheduled); sc != nil && sc.Status == corev1.ConditionFalse && sc.Reason != "" {
		return s + ", " + sc.Reason
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return s + ", " + cs.Name + " " + w.Reason
		}
	}
	return s
}

// oneLineMessage is the first line of a Serve message (they can carry a whole traceback), cut to
// 200 characters.
func oneLineMessage(m string) string {
	m, _, _ = strings.Cut(strings.TrimSpace(m), "\n")
	if len(m) > 200 {
		m = m[:197] + "..."
	}
	return m
}
