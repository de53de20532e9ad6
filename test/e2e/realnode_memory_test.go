package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// rampRE is the memory script's line that says the fill is resident, and how long after its start.
var rampRE = regexp.MustCompile(`allocated 2147483648 bytes, resident (\d+\.\d+)s after start; holding until 20s after start`)

// realMemoryHold (TestRealNode/kuberay-v111/memory-hold): on the real node, with the node's busybox (Debian's busybox-static
// 1.35.0, the busybox whose tail could not hold 2 GiB), memory-pressure --bytes 2Gi holds the
// 2 GiB in the pod's memory cgroup from the moment its log says "allocated" to the end of
// --duration, sampled every 200 ms, then frees it. The head's limit is raised to 4Gi so that the
// 2 GiB fits beside the stand-in. The ramp (the script's own figure, and the cgroup's from the
// container's start) is logged, not asserted: speed is the benchmark's (docs/performance.md).
// It runs in TestRealNode's v1.1.1 sandbox: the machine has one real node.
func realMemoryHold(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	head := h.roomyHeadOnRealNode("hold")
	base := podMemoryUsage(t, &head)

	r := h.Run("chaos", "memory-pressure", "hold", "--bytes", "2Gi", "--duration", "20s", "--image", sandbox.BusyboxImage, "--yes")
	if r.Code != 0 {
		t.Fatalf("memory-pressure: %s", r)
	}
	injected := time.Now()
	want := base + 2<<30
	var reached time.Time
	var low []string
	for {
		now := time.Now()
		got := podMemoryUsage(t, &head)
		if got >= want && reached.IsZero() {
			reached = now
		}
		said := h.ephemeralLog(head.Name)
		if strings.Contains(said, "held for 20s") || strings.Contains(said, "released memory") || now.Sub(injected) > 60*time.Second {
			break
		}
		// From the line that says "allocated" on, every sample must charge the 2 GiB.
		if rampRE.MatchString(said) && got < want {
			low = append(low, time.Since(injected).Round(time.Millisecond).String()+": "+mib(got-base))
		}
		time.Sleep(200 * time.Millisecond)
	}
	ec, log := h.waitEphemeralEnded(head.Name)
	m := rampRE.FindStringSubmatch(log)
	if ec.ExitCode != 0 || m == nil || !strings.Contains(log, "held for 20s") {
		t.Fatalf("the container ended %d: %q; want 0, the ramp line and \"held for 20s\"", ec.ExitCode, log)
	}
	if len(low) > 0 {
		t.Errorf("after it said \"allocated\", the pod's memory cgroup charged less than 2Gi above its %s base at %s", mib(base), strings.Join(low, ", "))
	}
	if reached.IsZero() {
		t.Errorf("the pod's memory cgroup never charged 2Gi above its %s base", mib(base))
	}
	if got := podMemoryUsage(t, &head); got > base+(256<<20) {
		t.Errorf("after the run the pod's cgroup still charges %s (before: %s)", mib(got), mib(base))
	}
	started := h.ephemeralStarted(head.Name)
	t.Logf("2Gi resident %ss after the script's start (its log); the cgroup charged it %s after the injection returned, container started at %s",
		m[1], reached.Sub(injected).Round(time.Millisecond), started.Format(time.RFC3339))
	h.removeFromRealNode("hold")
}

// roomyHeadOnRealNode creates a RayCluster whose head runs on the real node with 4Gi of memory
// (request and limit), so that 2 GiB of pressure fits beside the stand-in, and returns the head
// once it is Running.
func (h *H) roomyHeadOnRealNode(cluster string) corev1.Pod {
	h.T.Helper()
	h.CreateRayCluster(cluster, func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}
	})
	return h.WaitClusterRunning(cluster, 2*time.Minute)
}

func mib(n int64) string { return resource.NewQuantity(n>>20<<20, resource.BinarySI).String() }

// ephemeralLog is the log so far of the pod's newest ephemeral container ("" before it has one).
func (h *H) ephemeralLog(pod string) string {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{})
	if err != nil || len(p.Spec.EphemeralContainers) == 0 {
		return ""
	}
	name := p.Spec.EphemeralContainers[len(p.Spec.EphemeralContainers)-1].Name
	b, err := h.Kube.CoreV1().Pods(h.NS).GetLogs(pod, &corev1.PodLogOptions{Container: name}).DoRaw(h.Ctx)
	if err != nil {
		return ""
	}
	return string(b)
}

// ephemeralStarted is when the kubelet says the pod's newest ephemeral container started.
func (h *H) ephemeralStarted(pod string) time.Time {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	for _, cs := range p.Status.EphemeralContainerStatuses {
		if t := cs.State.Terminated; t != nil && cs.Name == p.Spec.EphemeralContainers[len(p.Spec.EphemeralContainers)-1].Name {
			return t.StartedAt.Time
		}
	}
	return time.Time{}
}
