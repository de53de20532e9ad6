package e2e

import (
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// With the KubeRay operator stopped (in a sandbox of the test's own), nothing replaces what heal
// deletes:
//   - --wait says that no new head came within --timeout and exits 1; once the operator is back
//     it creates the head, since heal's delete was all it needed;
//   - the race where the pod is replaced by a pod of the same name between plan and delete (the
//     test plays that replacer, which no operator running here could be relied on not to
//     disturb): the UID precondition refuses the delete and the new pod is untouched.
//
// Evictions are the kubelet's part, played by play.KubeletEvict.
func TestHealWithoutOperator(t *testing.T) {
	t.Parallel()
	sb := ownSandbox(t, "nooperator", sandbox.OperatorV111)
	h := newHOn(t, sb)
	h.CreateRayCluster("lonely", nil)
	h.CreateRayCluster("same", nil)
	h.WaitClusterRunning("lonely", 90*time.Second)
	h.WaitClusterRunning("same", 90*time.Second)
	if err := sb.Stop("kuberay-operator"); err != nil {
		t.Fatal(err)
	}
	ns := regexp.QuoteMeta(h.NS)
	var lonelyOld string

	t.Run("wait times out", func(t *testing.T) {
		h := *h
		h.T = t
		old := h.healEvict("lonely")
		res := h.Run("heal", "lonely", "--yes", "--timeout", "20s")
		t.Logf("heal with the operator stopped:\n%s", res)
		matchLines(t, "heal stdout", res.Stdout,
			`Plan: 1 delete`,
			`  delete pod `+ns+`/`+old.Name+` of RayCluster lonely \(head-evicted\)`,
			`    `+regexp.QuoteMeta(evictedSummary),
			`deleted pod `+ns+`/`+old.Name+` \(rule head-evicted\)`,
			`  recorded Event RayHeadHealed on RayCluster `+ns+`/lonely and on the pod`,
			`RayCluster `+ns+`/lonely: no new head within 20s`,
		)
		want := "error: no Running and Ready head within 20s for RayCluster " + h.NS + "/lonely; check the KubeRay operator's logs, then `kubectl ray doctor`\n"
		if res.Code != 1 || res.Stderr != want {
			t.Errorf("want exit 1 and stderr %q, got %s", want, res)
		}
		if heads := h.Pods("lonely", "head"); len(heads) != 0 {
			t.Errorf("want no head while the operator is stopped, got %v", podNames(heads))
		}
		lonelyOld = old.Name
	})

	t.Run("replaced by a pod of the same name", func(t *testing.T) {
		h := *h
		h.T = t
		proxy := newAPIProxy(t, sb)
		old := h.healEvict("same")
		proxy.Hold(1)
		done := make(chan Result, 1)
		go func() { done <- h.healRunWith(proxy.kubeconfig, "heal", "same", "--yes", "--timeout", "20s") }()
		held := proxy.Held(60*time.Second, done)
		zero := int64(0)
		if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, old.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		h.WaitFor("the evicted head to be gone", 30*time.Second, func() (bool, error) { return h.podGone(old.Name, string(old.UID)), nil })
		repl := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: h.NS, Labels: old.Labels, Annotations: old.Annotations, OwnerReferences: old.OwnerReferences},
			Spec:       old.Spec,
		}
		created, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, repl, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var running corev1.Pod
		h.WaitFor("the replacement of the same name Running", 60*time.Second, func() (bool, error) {
			p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, old.Name, metav1.GetOptions{})
			if err == nil {
				running = *p
			}
			return err == nil && PodRunningReady(p), err
		})
		close(held.Release)
		res := <-done
		t.Logf("heal through the proxy:\n%s", res)
		if res.Code != 0 || res.Stderr != "" {
			t.Errorf("heal: %s", res)
		}
		matchLines(t, "heal stdout", res.Stdout,
			`Plan: 1 delete`,
			`  delete pod `+ns+`/`+old.Name+` of RayCluster same \(head-evicted\)`,
			`    `+regexp.QuoteMeta(evictedSummary),
			`pod `+ns+`/`+old.Name+` changed since it was seen \(uid `+string(old.UID)+`, resourceVersion `+old.ResourceVersion+`\); not deleted`,
			`pod `+ns+`/`+old.Name+` changed since it was seen and needs no heal any more; not deleted`,
		)
		deletes := proxy.Deletes()
		if len(deletes) != 1 {
			t.Fatalf("want 1 DELETE through the proxy, got %+v", deletes)
		}
		wantDelete(t, deletes[0], h.NS, old.Name, old.UID, old.ResourceVersion, nil, 409)
		if running.UID != created.UID {
			t.Fatalf("the running pod %s is not the one created", running.UID)
		}
		h.wantUntouched(running)
		for _, e := range h.healEvents() {
			if e.InvolvedObject.Name == "same" || e.InvolvedObject.Name == old.Name {
				t.Errorf("an Event about a delete that did not happen: %+v", e)
			}
		}
	})

	// Once the operator runs again it creates the head heal made room for.
	if err := sb.Start(h.Ctx, "kuberay-operator"); err != nil {
		t.Fatal(err)
	}
	if lonelyOld != "" {
		h.waitNewHead("lonely", lonelyOld, 60*time.Second)
	}
}
