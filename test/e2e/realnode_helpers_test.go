package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// requireRealNodeEnv turns a machine without the real node from a skip into a failure: CI here
// can run it, so .ci/run sets it.
const requireRealNodeEnv = "KUBECTL_RAY_REQUIRE_REAL_NODE"

// realNodeSandbox starts a sandbox with operator v and the machine's one real node, stopped when
// t ends. Where the machine cannot run it the test skips and says why (or fails, with
// KUBECTL_RAY_REQUIRE_REAL_NODE=1).
func realNodeSandbox(t *testing.T, v string) *sandbox.Sandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A test process killed mid-run (a CI run cut off, a session ended) leaves its node's sysctls
	// behind; Up would reclaim them only after "before" was read (CI saw kernel.panic=10 as
	// "before" and the machine's own 1 as "after").
	if err := sandbox.ReclaimRealNode(); err != nil && !errors.Is(err, sandbox.ErrNoRealNode) {
		t.Fatalf("reclaiming the real node a killed run left: %v", err)
	}
	before := readHostState()
	sb, err := sandbox.Up(ctx, sandbox.Config{Dir: filepath.Join(env.work, "sandbox-real-"+v), Operator: v,
		DieWithParent: true, RealNode: true}, os.Stderr)
	if errors.Is(err, sandbox.ErrNoRealNode) {
		if os.Getenv(requireRealNodeEnv) == "1" {
			t.Fatalf("%s=1 but: %v", requireRealNodeEnv, err)
		}
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("starting the KubeRay %s sandbox with the real node: %v", v, err)
	}
	t.Cleanup(func() {
		if err := sb.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
		realNodeLeftNothing(t, sb, before)
	})
	return sb
}

// hostState is what the real node changes on this machine and must give back.
type hostState struct{ sysctls map[string]string }

func readHostState() hostState {
	m := map[string]string{}
	for _, k := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"} {
		b, _ := os.ReadFile("/proc/sys/" + k)
		m[k] = strings.TrimSpace(string(b))
	}
	return hostState{sysctls: m}
}

// realNodeLeftNothing checks the machine after down: no mount under the node's directory, no loop
// device on its disk, no pod cgroups, no containerd or shim, the pod range's route gone, the
// sysctls the kubelet sets restored.
func realNodeLeftNothing(t *testing.T, sb *sandbox.Sandbox, before hostState) {
	t.Helper()
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), sb.RealNodeDir()) {
		t.Errorf("mounts left under %s", sb.RealNodeDir())
	}
	if out, _ := exec.Command("losetup", "-j", filepath.Join(sb.RealNodeDir(), "disk.img")).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("loop device left: %s", out)
	}
	for _, d := range []string{"/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/cpu/kubepods", "/sys/fs/cgroup/kubepods"} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s left", d)
		}
	}
	if out, _ := exec.Command("ip", "route", "show", "table", "local").Output(); strings.Contains(string(out), strings.TrimSuffix(sandbox.RealNodePodCIDR, "/16")) {
		t.Errorf("the pod range's route is left: %s", out)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		if b, err := os.ReadFile(f); err == nil && (strings.HasPrefix(string(b), "containerd") || strings.Contains(string(b), "containerd-shim")) {
			t.Errorf("process left: %s", strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	if after := readHostState(); fmt.Sprint(after.sysctls) != fmt.Sprint(before.sysctls) {
		t.Errorf("sysctls not restored: before %v, after %v", before.sysctls, after.sysctls)
	}
}

// onRealNode puts the head on the real node and the workers on kwok's: a pressure experiment on
// the real node then has the head as its only Ray pod there.
func onRealNode(rc *rayv1.RayCluster) {
	sandbox.RealNodePlacement(&rc.Spec.HeadGroupSpec.Template.Spec)
	for i := range rc.Spec.WorkerGroupSpecs {
		rc.Spec.WorkerGroupSpecs[i].Template.Spec.NodeSelector = map[string]string{"type": "kwok"}
	}
}

// headEnv adds environment variables to the head's Ray container (the stand-in's switches).
func headEnv(rc *rayv1.RayCluster, kv ...string) {
	c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
	for i := 0; i+1 < len(kv); i += 2 {
		c.Env = append(c.Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
}

// realNodeCalm waits until the real node reports no pressure and carries no pressure taint: the
// previous experiment's fill is gone and the kubelet's transition period has passed.
func (h *H) realNodeCalm() {
	h.T.Helper()
	h.WaitFor("the real node without pressure conditions or taints", 2*time.Minute, func() (bool, error) {
		n, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, sandbox.RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type != corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return false, nil
			}
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key != sandbox.RealNodeTaint {
				return false, nil
			}
		}
		return sandbox.NodeReady(n), nil
	})
}

// removeFromRealNode deletes the RayCluster and waits until none of its pods is left on the real
// node, so the next experiment there has no bystander.
func (h *H) removeFromRealNode(cluster string) {
	h.T.Helper()
	if err := h.Ray.RayV1().RayClusters(h.NS).Delete(h.Ctx, cluster, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		h.T.Fatal(err)
	}
	h.WaitFor("RayCluster "+cluster+"'s pods gone from the real node", 2*time.Minute, func() (bool, error) {
		list, err := h.Kube.CoreV1().Pods(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + cluster,
			FieldSelector: "spec.nodeName=" + sandbox.RealNodeName})
		if err != nil {
			return false, err
		}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) {
				// Terminal pods of a deleted RayCluster go with the garbage collector.
				continue
			}
			return false, nil
		}
		return true, nil
	})
}

// realNodeFree is the free space of the real node's filesystem (nodefs and imagefs).
func realNodeFree(t *testing.T, sb *sandbox.Sandbox) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Join(sb.RealNodeDir(), "fs"), &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// podEvents are the Events about pod with reason, as a list of messages.
func (h *H) podEvents(pod, reason string) []string {
	h.T.Helper()
	list, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason})
	if err != nil {
		h.T.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Source.Component+": "+e.Message)
	}
	return out
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// podMemoryUsage is what the pod's memory cgroup charges now, read on this machine (the real node
// runs here; kubectl top cannot reach a loopback kubelet through node proxy). The kubelet's
// cgroupfs driver puts a pod at kubepods[/burstable|/besteffort]/pod<UID>.
func podMemoryUsage(t *testing.T, p *corev1.Pod) int64 {
	t.Helper()
	for _, qos := range []string{"", "burstable/", "besteffort/"} {
		for _, f := range []string{
			"/sys/fs/cgroup/memory/kubepods/" + qos + "pod" + string(p.UID) + "/memory.usage_in_bytes", // v1
			"/sys/fs/cgroup/kubepods/" + qos + "pod" + string(p.UID) + "/memory.current",               // v2
		} {
			if b, err := os.ReadFile(f); err == nil {
				n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	t.Fatalf("no memory cgroup for pod %s (uid %s) on this machine", p.Name, p.UID)
	return 0
}
