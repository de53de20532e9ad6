package e2e

// Helpers for the chaos disk-pressure / memory-pressure end-to-end tests: the kwok Stages that
// play the kubelet for our ephemeral containers (play.KubeletPressureStagesYAML), a node of the
// test's own, the kubelet's node DiskPressure, and running the binary in the background.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// createPressureStages creates play.KubeletPressureStages for h's namespace and deletes them when
// the test ends.
func createPressureStages(h *H, delay time.Duration) {
	h.T.Helper()
	remove, err := play.KubeletPressureStages(h.Ctx, h.SB.Admin, h.NS, delay)
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() {
		if err := remove(context.Background()); err != nil {
			h.T.Error(err)
		}
	})
}

// pressureNode creates a kwok-managed node for this test alone (node pressure must not disturb
// tests running beside it), waits until pods can be scheduled on it, and deletes it at the end.
func pressureNode(h *H) string {
	h.T.Helper()
	return h.ownNode("kwok-" + h.NS)
}

// dedicatedTaint keeps other tests' pods off a test's own node: the sandbox's pods have no node
// selector, and a pod of a test running beside it once landed on a pressure test's node and was
// evicted with its head (CI). The test's own pods tolerate it (pinPod).
const dedicatedTaint = "e2e.kubectl-ray.io/dedicated"

// ownNode creates a kwok-managed node named name for this test alone, tainted dedicatedTaint=NS,
// waits until it is Ready with no other taint, and deletes it when the test ends.
func (h *H) ownNode(name string) string {
	h.T.Helper()
	if len(name) > 63 {
		name = name[:63]
	}
	n := sandbox.FakeNode(name, true)
	n.Spec.Taints = []corev1.Taint{{Key: dedicatedTaint, Value: h.NS, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := h.Kube.CoreV1().Nodes().Create(h.Ctx, n, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() {
		_ = h.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	h.WaitFor("node "+name+" Ready with no taint but its own", 60*time.Second, func() (bool, error) {
		n, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return sandbox.NodeReady(n) && len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Key == dedicatedTaint, nil
	})
	return name
}

// pinPod puts a pod on node, a test's own node (ownNode): its node selector and the toleration of
// the node's dedicated taint.
func pinPod(spec *corev1.PodSpec, node string) {
	spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: dedicatedTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
}

// kubeletPressure plays the kubelet's eviction manager setting the node's DiskPressure or
// MemoryPressure condition (True once the disk or memory fills, False once the evicted pod's is
// reclaimed), and waits for the real node lifecycle controller to add or remove the matching
// node.kubernetes.io/disk-pressure or memory-pressure NoSchedule taint in answer.
func kubeletPressure(h *H, node string, p play.Pressure, on bool) {
	h.T.Helper()
	set, status := play.KubeletNodePressureRelieved, corev1.ConditionFalse
	if on {
		set, status = play.KubeletNodePressure, corev1.ConditionTrue
	}
	if err := set(h.Ctx, h.Kube, node, p); err != nil {
		h.T.Fatalf("setting %s=%s on node %s: %v", p, status, node, err)
	}
	taint := map[play.Pressure]string{play.DiskPressure: corev1.TaintNodeDiskPressure, play.MemoryPressure: corev1.TaintNodeMemoryPressure}[p]
	h.WaitFor(fmt.Sprintf("the node lifecycle controller to answer %s=%s on %s", p, status, node), 30*time.Second, func() (bool, error) {
		n, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		tainted := false
		for _, t := range n.Spec.Taints {
			tainted = tainted || (t.Key == taint && t.Effect == corev1.TaintEffectNoSchedule)
		}
		return tainted == on, nil
	})
}

// pinCluster puts every pod of the RayCluster on node, a test's own node.
func pinCluster(rc *rayv1.RayCluster, node string) {
	pinPod(&rc.Spec.HeadGroupSpec.Template.Spec, node)
	for i := range rc.Spec.WorkerGroupSpecs {
		pinPod(&rc.Spec.WorkerGroupSpecs[i].Template.Spec, node)
	}
}

// start runs the binary like h.Run, in the background; the result arrives on the channel.
func (h *H) start(args ...string) <-chan Result {
	full := append([]string{"--kubeconfig", h.SB.Kubeconfig(), "-n", h.NS}, args...)
	done := make(chan Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(h.Ctx, 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, env.bin, full...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			res.Code = ee.ExitCode()
		case err != nil:
			res.Code, res.Stderr = -1, res.Stderr+err.Error()
		}
		done <- res
	}()
	return done
}

// ephemeralOf re-reads the pod and returns its ephemeral containers.
func (h *H) ephemeralOf(pod string) []corev1.EphemeralContainer {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	return p.Spec.EphemeralContainers
}

var containerNameRE = regexp.MustCompile(`kubectl-ray-(disk|memory)-pressure-([a-z0-9]{5})`)

// suffixIn is the random suffix of the container name the command printed.
func suffixIn(t *testing.T, out string) string {
	t.Helper()
	m := containerNameRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no kubectl-ray-*-pressure-XXXXX container name in:\n%s", out)
	}
	return m[2]
}

// goldenContainer is a golden file of the feature's unit tests (written for suffix abcde), with the
// suffix and target container replaced: the e2e run must produce byte for byte what was reviewed.
func goldenContainer(t *testing.T, path, oldSuffix, suffix string, replace ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if strings.HasPrefix(s, "# basis:") {
		s = s[strings.Index(s, "\n")+1:]
	}
	s = strings.ReplaceAll(s, oldSuffix, suffix)
	return strings.NewReplacer(replace...).Replace(s)
}

var timelineTimeRE = regexp.MustCompile(`(?m)^\s*\+[0-9hms.]+\s\s`)

// timelineLines strips the relative times from --watch-eviction's output, which differ per run.
func timelineLines(out string) []string {
	out = timelineTimeRE.ReplaceAllString(out, "+T  ")
	out = regexp.MustCompile(`Running [0-9hms.]+ after the eviction`).ReplaceAllString(out, "Running T after the eviction")
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// nodeWarning is the line the plan prints about the other pods of target's node, from a LIST made
// now as the command makes it ("" when there are none). Tests that check it run on a node of
// their own, so no other test's pods come and go there.
func nodeWarning(h *H, target corev1.Pod) string {
	h.T.Helper()
	list, err := h.Kube.CoreV1().Pods("").List(h.Ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + target.Spec.NodeName})
	if err != nil {
		h.T.Fatal(err)
	}
	var others []string
	for _, p := range list.Items {
		ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if !ended && (p.Namespace != target.Namespace || p.Name != target.Name) {
			others = append(others, p.Namespace+"/"+p.Name)
		}
	}
	if len(others) == 0 {
		return ""
	}
	sort.Strings(others)
	count := fmt.Sprintf("%d other pods", len(others))
	if len(others) == 1 {
		count = "1 other pod"
	}
	return fmt.Sprintf("warning: pod %s/%s shares node %s with %s, which the kubelet may evict first, or as well: %s\n",
		target.Namespace, target.Name, target.Spec.NodeName, count, strings.Join(others, ", "))
}

// plainPod creates a Running pod that is not a Ray pod on node (a bystander of a pressure run),
// and returns it once kwok runs it.
func plainPod(h *H, name, node string) corev1.Pod {
	h.T.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
	pinPod(&pod.Spec, node)
	if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, pod, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	var got *corev1.Pod
	h.WaitFor("pod "+name+" Running on "+node, 60*time.Second, func() (bool, error) {
		var err error
		got, err = h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning && got.Spec.NodeName == node, err
	})
	return *got
}

// waitOurs waits until a container of ours (name prefix) runs in pod, and returns its name.
func waitOurs(h *H, pod, prefix string) string {
	h.T.Helper()
	var name string
	h.WaitFor("our ephemeral container running in "+pod, 60*time.Second, func() (bool, error) {
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, s := range p.Status.EphemeralContainerStatuses {
			if strings.HasPrefix(s.Name, prefix) && s.State.Running != nil {
				name = s.Name
				return true, nil
			}
		}
		return false, nil
	})
	return name
}
