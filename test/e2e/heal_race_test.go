package e2e

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// wantDelete fails unless d is a DELETE of pod name with preconditions uid and resourceVersion,
// the given grace period (nil: the pod's own) and answer status.
func wantDelete(t *testing.T, d proxiedDelete, ns, name string, uid types.UID, rv string, grace *int64, status int) {
	t.Helper()
	pre := d.Options.Preconditions
	okGrace := grace == nil && d.Options.GracePeriodSeconds == nil ||
		grace != nil && d.Options.GracePeriodSeconds != nil && *grace == *d.Options.GracePeriodSeconds
	if d.Path != "/api/v1/namespaces/"+ns+"/pods/"+name || pre == nil || pre.UID == nil || *pre.UID != uid ||
		pre.ResourceVersion == nil || *pre.ResourceVersion != rv || !okGrace || d.Status != status {
		t.Errorf("DELETE %s preconditions %s grace %s answered %d (body: %s); want pod %s, uid %s, resourceVersion %s, grace %s, answer %d",
			d.Path, showPre(pre), showInt(d.Options.GracePeriodSeconds), d.Status, d.DecodeErr, name, uid, rv, showInt(grace), status)
	}
}

// The pod changes between heal's plan and its delete: a proxy in front of the API server holds
// heal's DELETE while another client annotates the evicted head (a new resourceVersion, same
// UID). The API server refuses the delete (409, precondition); heal reads again, finds the same
// pod still evicted, and deletes it with the new resourceVersion. The eviction is played
// (play.KubeletEvict); the real KubeRay v1.1.1 creates the new head.
func TestHealRaceChangedPodIsReplanned(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	proxy := newAPIProxy(t, h.SB)
	h.CreateRayCluster("changed", nil)
	h.WaitClusterRunning("changed", 90*time.Second)
	old := h.healEvict("changed")

	proxy.Hold(1)
	done := make(chan Result, 1)
	go func() { done <- h.healRunWith(proxy.kubeconfig, "heal", "changed", "--yes", "--timeout", "90s") }()
	held := proxy.Held(60*time.Second, done)
	patched, err := h.Kube.CoreV1().Pods(h.NS).Patch(h.Ctx, old.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"e2e.kubectl-ray.io/touched":"between plan and delete"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	close(held.Release)
	res := <-done
	t.Logf("heal through the proxy:\n%s", res)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("heal: %s", res)
	}
	newHead := h.waitNewHead("changed", old.Name, 5*time.Second)
	ns := regexp.QuoteMeta(h.NS)
	matchLines(t, "heal stdout", res.Stdout,
		`Plan: 1 delete`,
		`  delete pod `+ns+`/`+old.Name+` of RayCluster changed \(head-evicted\)`,
		`    `+regexp.QuoteMeta(evictedSummary),
		`pod `+ns+`/`+old.Name+` changed since it was seen \(uid `+string(old.UID)+`, resourceVersion `+old.ResourceVersion+`\); not deleted`,
		`deleted pod `+ns+`/`+old.Name+` \(rule head-evicted\)`,
		`  recorded Event RayHeadHealed on RayCluster `+ns+`/changed and on the pod`,
		`RayCluster `+ns+`/changed: new head `+newHead.Name+` created `+durRE+` after the delete, Running and Ready after `+durRE,
	)
	deletes := proxy.Deletes()
	if len(deletes) != 2 {
		t.Fatalf("want 2 DELETEs through the proxy, got %+v", deletes)
	}
	wantDelete(t, deletes[0], h.NS, old.Name, old.UID, old.ResourceVersion, nil, 409)
	wantDelete(t, deletes[1], h.NS, old.Name, old.UID, patched.ResourceVersion, nil, 200)
	if n := len(h.healEvents()); n != 2 {
		t.Errorf("want 2 RayHeadHealed Events, got %d", n)
	}
}

// The pod is replaced between heal's plan and its delete: while the proxy holds heal's DELETE,
// someone deletes the evicted head and KubeRay v1.1.1 creates a new head (another name). heal's
// DELETE finds no pod (404): nothing is deleted, no Event is recorded, and the new head is
// untouched. The eviction is played (play.KubeletEvict).
func TestHealRaceReplacedPodIsLeftAlone(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	proxy := newAPIProxy(t, h.SB)
	h.CreateRayCluster("replaced", nil)
	h.WaitClusterRunning("replaced", 90*time.Second)
	old := h.healEvict("replaced")

	proxy.Hold(1)
	done := make(chan Result, 1)
	go func() { done <- h.healRunWith(proxy.kubeconfig, "heal", "replaced", "--yes", "--timeout", "90s") }()
	held := proxy.Held(60*time.Second, done)
	if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	newHead := h.waitNewHead("replaced", old.Name, 60*time.Second)
	close(held.Release)
	res := <-done
	t.Logf("heal through the proxy:\n%s", res)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("heal: %s", res)
	}
	ns := regexp.QuoteMeta(h.NS)
	matchLines(t, "heal stdout", res.Stdout,
		`Plan: 1 delete`,
		`  delete pod `+ns+`/`+old.Name+` of RayCluster replaced \(head-evicted\)`,
		`    `+regexp.QuoteMeta(evictedSummary),
		`pod `+ns+`/`+old.Name+` is already gone; not deleted`,
	)
	deletes := proxy.Deletes()
	if len(deletes) != 1 {
		t.Fatalf("want 1 DELETE through the proxy, got %+v", deletes)
	}
	wantDelete(t, deletes[0], h.NS, old.Name, old.UID, old.ResourceVersion, nil, 404)
	h.wantUntouched(newHead)
	if evs := h.healEvents(); len(evs) != 0 {
		t.Errorf("want no RayHeadHealed Event, got %+v", evs)
	}
}

// wantUntouched fails unless pod is still there, the same object, not being deleted, and
// Running and Ready.
func (h *H) wantUntouched(pod corev1.Pod) {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatalf("pod %s: %v", pod.Name, err)
	}
	if p.UID != pod.UID || p.DeletionTimestamp != nil || !PodRunningReady(p) {
		h.T.Errorf("pod %s was touched: uid %s→%s deletion %v phase %s", pod.Name, pod.UID, p.UID, p.DeletionTimestamp, p.Status.Phase)
	}
}

func showPre(p *metav1.Preconditions) string {
	if p == nil {
		return "none"
	}
	uid, rv := "-", "-"
	if p.UID != nil {
		uid = string(*p.UID)
	}
	if p.ResourceVersion != nil {
		rv = *p.ResourceVersion
	}
	return "{uid " + uid + ", resourceVersion " + rv + "}"
}

func showInt(i *int64) string {
	if i == nil {
		return "nil"
	}
	return strconv.FormatInt(*i, 10)
}
