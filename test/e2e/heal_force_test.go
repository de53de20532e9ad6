package e2e

import (
	"regexp"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// head-terminating-stuck: the head is bound (nodeName) to a node nothing runs (play.NodeLost: no
// kubelet, Ready Unknown, the test's own node) and deleted; with no kubelet to confirm the kill it
// stays Terminating and KubeRay v1.1.1 keeps counting it as the head. Without --force heal leaves
// it and says why; with --force it deletes it with grace period 0 (seen on the wire through a
// proxy), and the operator creates a new head elsewhere.
func TestHealForceStuckHead(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	proxy := newAPIProxy(t, h.SB)
	head := h.headStuckTerminating("stuck")
	lost := head.Spec.NodeName
	h.WaitFor("doctor to report head-terminating-stuck", 150*time.Second, func() (bool, error) {
		_, findings := h.doctorFindings("stuck")
		return contains(findings, "error head-terminating-stuck pod/"+head.Name), nil
	})
	stuck, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{})
	if err != nil || stuck.DeletionTimestamp == nil {
		t.Fatalf("the head is not Terminating: %v", err)
	}
	ns := regexp.QuoteMeta(h.NS)

	res := h.Run("heal", "stuck", "--yes")
	t.Logf("heal without --force:\n%s", res)
	if res.Code != 0 || res.Stderr != "" {
		t.Errorf("heal without --force: %s", res)
	}
	matchLines(t, "heal without --force", res.Stdout,
		`Not healable: 1`,
		`  pod `+ns+`/`+head.Name+` of RayCluster stuck \(head-terminating-stuck\)`,
		`    stuck Terminating on node `+lost+`, which is unreachable; pass --force to force-delete it \(grace period 0\) once you know the node is down`,
		`Nothing to heal for RayCluster `+ns+`/stuck\.`,
	)
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); err != nil || p.ResourceVersion != stuck.ResourceVersion {
		t.Fatalf("heal without --force touched the stuck head: %v", err)
	}

	res = h.healRunWith(proxy.kubeconfig, "heal", "stuck", "--yes", "--force", "--timeout", "90s")
	t.Logf("heal --force:\n%s", res)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("heal --force: %s", res)
	}
	newHead := h.waitNewHead("stuck", head.Name, 10*time.Second)
	since := regexp.QuoteMeta(stuck.DeletionTimestamp.UTC().Format(time.RFC3339))
	matchLines(t, "heal --force", res.Stdout,
		`Plan: 1 delete`,
		`  force-delete \(grace period 0\) pod `+ns+`/`+head.Name+` of RayCluster stuck \(head-terminating-stuck\)`,
		`    stuck Terminating since `+since+` on node `+lost+`, which is unreachable`,
		`force-deleted \(grace period 0\) pod `+ns+`/`+head.Name+` \(rule head-terminating-stuck\)`,
		`  recorded Event RayHeadHealed on RayCluster `+ns+`/stuck and on the pod`,
		`RayCluster `+ns+`/stuck: new head `+newHead.Name+` created `+durRE+` after the delete, Running and Ready after `+durRE,
	)
	deletes := proxy.Deletes()
	if len(deletes) != 1 {
		t.Fatalf("want 1 DELETE through the proxy, got %+v", deletes)
	}
	zero := int64(0)
	wantDelete(t, deletes[0], h.NS, head.Name, stuck.UID, stuck.ResourceVersion, &zero, 200)
	if !h.podGone(head.Name, string(stuck.UID)) {
		t.Errorf("the stuck head %s is still there", head.Name)
	}
	if newHead.Spec.NodeName == lost {
		t.Errorf("the new head is on the lost node")
	}
	evs := healEventsAbout(h.healEvents(), "Pod", head.Name)
	if len(evs) != 1 || evs[0].Action != "ForceDeletePod" {
		t.Errorf("want one ForceDeletePod Event on the stuck head, got %+v", evs)
	}
}

// healNodeLost calls play.NodeLost until it succeeds. It creates the node and then writes the
// status of the object it created; when the node lifecycle controller updates the new node in
// between, that write conflicts. The node is then deleted and made again.
func healNodeLost(h *H, name string) {
	h.T.Helper()
	for i := 0; ; i++ {
		_, err := play.NodeLost(h.Ctx, h.Kube, name)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i == 4 {
			h.T.Fatalf("play.NodeLost: %v", err)
		}
		if err := h.Kube.CoreV1().Nodes().Delete(h.Ctx, name, metav1.DeleteOptions{}); err != nil {
			h.T.Fatal(err)
		}
		h.WaitFor("node "+name+" gone", 30*time.Second, func() (bool, error) {
			_, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
}
