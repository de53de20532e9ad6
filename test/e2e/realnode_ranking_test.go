package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// head-evictable-first, proven by the real kubelet: two heads of KubeRay's sample on
// the real node, "guarded" with an ephemeral-storage request above what it uses and "unguarded"
// with none. doctor --risks names the unguarded head and not the guarded one; then the node's
// disk is filled from outside every pod (a file the test writes on the node's filesystem, so no
// pod's own use grows), and the kubelet must evict the unguarded head, and not the guarded one.
// If it picks the guarded head, the rule is wrong and the test fails. The fill is removed as soon
// as the first head is evicted, since the kubelet goes on evicting while the pressure lasts
// (after the unguarded head, the guarded one would be next: it is then the only pod left).
//
// It runs both ways: the guarded head created first and first by name, then the unguarded one
// (ranking.swapped): a kubelet that broke a tie by age or by name, not by the request, would
// pass one way and fail the other.
//
// Only the disk half of the rule is proven: node memory pressure cannot be made reliably on
// this machine (docs/sandbox.md). About 70 s each way.
func realEvictionRanking(t *testing.T, sb *sandbox.Sandbox, r ranking) {
	h := newHOn(t, sb)
	h.realNodeCalm()
	guard := func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		c.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("100Mi")
	}
	if r.swapped {
		h.CreateRayCluster(r.unguarded, onRealNode)
		h.CreateRayCluster(r.guarded, guard)
	} else {
		h.CreateRayCluster(r.guarded, guard)
		h.CreateRayCluster(r.unguarded, onRealNode)
	}
	guarded := h.WaitClusterRunning(r.guarded, 2*time.Minute)
	unguarded := h.WaitClusterRunning(r.unguarded, 2*time.Minute)
	for _, p := range []corev1.Pod{guarded, unguarded} {
		if p.Spec.NodeName != sandbox.RealNodeName {
			t.Fatalf("head %s is on %s, want the real node", p.Name, p.Spec.NodeName)
		}
	}

	d, res := h.doctorJSON("--risks")
	if res.Code != 0 {
		t.Fatalf("doctor --risks: %s", res)
	}
	f := d.finding(t, r.unguarded, "head-evictable-first")
	if !strings.Contains(f.Message, "under disk pressure: it requests no ephemeral-storage") {
		t.Errorf("head-evictable-first on the unguarded head: %+v", f)
	}
	for _, f := range d.Findings {
		if f.Rule == "head-evictable-first" && f.Cluster != nil && f.Cluster.Name == r.guarded {
			t.Fatalf("head-evictable-first names the guarded head: %+v", f)
		}
	}

	// The kubelet's per-pod usage lags by about 10 s (shared/facts): wait until it has seen the
	// unguarded head's first bytes (its logs), which is what puts it above its request of 0.
	time.Sleep(20 * time.Second)
	h.realNodeCalm()
	free := realNodeFree(t, sb)
	fill := filepath.Join(sb.RealNodeDir(), "fs", "ranking-fill")
	// Leave 150Mi free, under the kubelet's 300Mi nodefs threshold.
	size := free - 150<<20
	if size <= 0 {
		t.Fatalf("the real node has only %d MiB free", free>>20)
	}
	fillNode(t, fill, size)
	defer os.Remove(fill)
	t.Logf("filled the real node's disk from outside its pods: %d MiB, %d MiB left free", size>>20, realNodeFree(t, sb)>>20)

	var first corev1.Pod
	h.WaitFor("the kubelet to evict a head", 2*time.Minute, func() (bool, error) {
		for _, name := range []string{guarded.Name, unguarded.Name} {
			p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" {
				first = *p
				return true, nil
			}
		}
		return false, nil
	})
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if first.Name != unguarded.Name {
		t.Fatalf("the kubelet evicted %s first, the head with its ephemeral-storage request; head-evictable-first named %s: the rule is wrong\n%s",
			first.Name, unguarded.Name, first.Status.Message)
	}
	if !strings.HasPrefix(first.Status.Message, "The node was low on resource: ephemeral-storage") {
		t.Errorf("the unguarded head's eviction message: %q", first.Status.Message)
	}
	t.Logf("evicted first, as doctor said: %s: %s", first.Name, first.Status.Message)

	// The pressure ends with the fill gone; the guarded head is still the same running pod.
	h.realNodeCalm()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, guarded.Name, metav1.GetOptions{})
	if err != nil || p.UID != guarded.UID || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		t.Errorf("the guarded head after the pressure: %v %s %s", err, p.Status.Phase, p.Status.Message)
	}
	if evs := h.podEvents(guarded.Name, "Evicted"); len(evs) > 0 {
		t.Errorf("the guarded head was evicted too: %q", evs)
	}
	h.removeFromRealNode(r.guarded)
	h.removeFromRealNode(r.unguarded)
}

// ranking names the two heads of an eviction-ranking run, and says which is created first: the
// unguarded one when swapped. Each pair sorts by name in the order it is created.
type ranking struct {
	guarded, unguarded string
	swapped            bool
}

var (
	guardedFirst   = ranking{guarded: "guarded", unguarded: "unguarded"}
	unguardedFirst = ranking{guarded: "b-guarded", unguarded: "a-unguarded", swapped: true}
)

// fillNode allocates size bytes of the real node's filesystem in one file, at once (fallocate):
// a disk filled by something other than a pod, as a node's logs or images fill it.
func fillNode(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		t.Fatalf("fallocate %d MiB at %s: %v", size>>20, path, err)
	}
}
