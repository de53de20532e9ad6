package e2e

// `kubectl ray chaos disk-pressure` / `memory-pressure` on the sandbox: what is sent and stored,
// and every refusal. The sandbox runs no container, so the fill itself is not observed here (the
// script runs for real in pkg/chaos/pressure's tests); what is asserted is the API's view.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// --dry-run prints the exact container, the API server validates the PATCH (dryRun=All), and the
// pod is left as it was. The plan names the other pods of the head's node (its worker, and a pod
// of another workload): the cluster runs on a node of the test's own, beside a plain pod.
func TestPressureDryRunPrintsExactContainerAndAddsNothing(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	node := pressureNode(h)
	h.CreateRayCluster("dry", func(rc *rayv1.RayCluster) { pinCluster(rc, node) })
	head := h.WaitClusterRunning("dry", 90*time.Second)
	plainPod(h, "web-0", node)
	warning := nodeWarning(h, head)
	if want := "with 2 other pods"; !strings.Contains(warning, want) || !strings.Contains(warning, h.NS+"/web-0") {
		t.Fatalf("the node should hold the head, its worker and web-0; the warning would be %q", warning)
	}

	res := h.Run("chaos", "disk-pressure", "dry", "--size", "10Gi", "--dry-run")
	if res.Code != 0 {
		t.Fatalf("dry run: %s", res)
	}
	suffix := suffixIn(t, res.Stdout)
	if want := goldenContainer(t, "pkg/cmd/chaos/testdata/dry-run-disk.yaml", "abcde", suffix); res.Stdout != want {
		t.Errorf("stdout differs from the reviewed golden file:\n--- got\n%s\n--- want\n%s", res.Stdout, want)
	}
	wantErr := fmt.Sprintf("dry run: the API server accepted kubectl-ray-disk-pressure-%s for pod %s/%s; nothing was injected\n", suffix, h.NS, head.Name) + warning
	if res.Stderr != wantErr {
		t.Errorf("stderr:\n%q\nwant\n%q", res.Stderr, wantErr)
	}
	if ec := h.ephemeralOf(head.Name); len(ec) != 0 {
		t.Fatalf("dry run added ephemeral containers: %+v", ec)
	}

	// The server really validates it: an image with a leading space passes the plugin but not
	// the API server's pod validation, and the dry run reports that, still adding nothing.
	bad := h.Run("chaos", "disk-pressure", "dry", "--size", "10Gi", "--image", " busybox", "--dry-run")
	if bad.Code != 3 || bad.Stdout != "" || strings.Count(bad.Stderr, "\n") != 1 ||
		!strings.HasPrefix(bad.Stderr, "error: patch pods/ephemeralcontainers ") || !strings.Contains(bad.Stderr, "leading or trailing whitespace") {
		t.Errorf("dry run with an invalid image: want exit 3 and one line naming the server's refusal, got %s", bad)
	}
	if ec := h.ephemeralOf(head.Name); len(ec) != 0 {
		t.Fatalf("refused dry run added ephemeral containers: %+v", ec)
	}
}

// A real inject stores exactly the reviewed container: image, command with size, duration and
// cleanup, targetContainerName, and no resources. Disk on the head, memory on a worker.
func TestPressureInjectStoresExactEphemeralContainer(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	node := pressureNode(h)
	h.CreateRayCluster("inj", func(rc *rayv1.RayCluster) { pinCluster(rc, node) })
	head := h.WaitClusterRunning("inj", 90*time.Second)
	worker := h.Pods("inj", "worker")[0]

	// Once injected, the run names the other pods of the node, with --yes too.
	warning := nodeWarning(h, head)
	res := h.Run("chaos", "disk-pressure", "pod/"+head.Name, "--size", "10Gi", "--yes")
	if res.Code != 0 || res.Stderr != warning || warning == "" {
		t.Fatalf("disk-pressure: %s", res)
	}
	suffix := suffixIn(t, res.Stdout)
	name := "kubectl-ray-disk-pressure-" + suffix
	wantOut := fmt.Sprintf("injected %s into pod %s/%s (target container ray-head, node disk: 10Gi, for 2m0s); its log: kubectl logs -n %s %s -c %s\n",
		name, h.NS, head.Name, h.NS, head.Name, name)
	if res.Stdout != wantOut {
		t.Errorf("stdout:\n%q\nwant\n%q", res.Stdout, wantOut)
	}
	assertStored(t, h.ephemeralOf(head.Name), goldenContainer(t, "pkg/cmd/chaos/testdata/dry-run-disk.yaml", "abcde", suffix))

	warning = nodeWarning(h, worker)
	res = h.Run("chaos", "memory-pressure", "inj", "--role", "worker", "--bytes", "2Gi", "--duration", "1m", "--yes")
	if res.Code != 0 || res.Stderr != warning {
		t.Fatalf("memory-pressure: %s", res)
	}
	suffix = suffixIn(t, res.Stdout)
	name = "kubectl-ray-memory-pressure-" + suffix
	wantOut = fmt.Sprintf("injected %s into pod %s/%s (target container ray-worker, memory: 2Gi, for 1m0s); its log: kubectl logs -n %s %s -c %s\n",
		name, h.NS, worker.Name, h.NS, worker.Name, name)
	if res.Stdout != wantOut {
		t.Errorf("stdout:\n%q\nwant\n%q", res.Stdout, wantOut)
	}
	assertStored(t, h.ephemeralOf(worker.Name), goldenContainer(t, "pkg/chaos/pressure/testdata/memory-bytes-worker.yaml", "q1w2e", suffix,
		"targetContainerName: autoscaler", "targetContainerName: ray-worker"))
	if ec := h.ephemeralOf(head.Name); len(ec) != 1 {
		t.Errorf("the worker's run touched the head: %d ephemeral containers", len(ec))
	}
}

// assertStored checks that the pod holds exactly one ephemeral container, equal to the golden YAML
// once the API server's only default (terminationMessagePath) is added.
func assertStored(t *testing.T, stored []corev1.EphemeralContainer, golden string) {
	t.Helper()
	if len(stored) != 1 {
		t.Fatalf("want exactly one ephemeral container, the pod has %d", len(stored))
	}
	var want corev1.EphemeralContainer
	if err := yaml.UnmarshalStrict([]byte(golden), &want); err != nil {
		t.Fatal(err)
	}
	want.TerminationMessagePath = corev1.TerminationMessagePathDefault
	got := stored[0]
	if !reflect.DeepEqual(got, want) {
		g, _ := yaml.Marshal(got)
		w, _ := yaml.Marshal(want)
		t.Errorf("stored ephemeral container differs:\n--- got\n%s\n--- want\n%s", g, w)
	}
	if got.Resources.Limits != nil || got.Resources.Requests != nil || got.TargetContainerName == "" || len(got.Command) != 3 {
		t.Errorf("stored container: resources %+v, target %q, %d command words", got.Resources, got.TargetContainerName, len(got.Command))
	}
}

// Pods that must not be touched, bad input and missing permission: one line each, the documented
// exit code, and nothing injected anywhere.
func TestPressureRefusalsInjectNothing(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("ref", nil)
	head := h.WaitClusterRunning("ref", 90*time.Second)

	// A Running pod that is not a Ray pod; a Ray-labelled pod that cannot be scheduled (Pending);
	// a Ray-labelled Running pod in kube-system.
	mkPod := func(ns, name string, labels, nodeSelector map[string]string) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{NodeSelector: nodeSelector,
				Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}
		if _, err := h.Kube.CoreV1().Pods(ns).Create(h.Ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rayLabels := map[string]string{"ray.io/is-ray-node": "yes", "ray.io/node-type": "head", "ray.io/cluster": "ref"}
	mkPod(h.NS, "plain", map[string]string{"app": "plain"}, nil)
	// Of a cluster that does not exist: labelled as a second head of "ref", KubeRay deletes it as a
	// head too many (it did once, before the case that needs it ran).
	mkPod(h.NS, "pending", map[string]string{"ray.io/is-ray-node": "yes", "ray.io/node-type": "head", "ray.io/cluster": "orphan"},
		map[string]string{"kubernetes.io/hostname": "no-such-node"})
	sysPod := h.NS + "-ray"
	mkPod("kube-system", sysPod, rayLabels, nil)
	t.Cleanup(func() {
		_ = h.Kube.CoreV1().Pods("kube-system").Delete(h.Ctx, sysPod, metav1.DeleteOptions{})
	})
	for _, p := range []struct{ ns, name string }{{h.NS, "plain"}, {"kube-system", sysPod}} {
		h.WaitFor("pod "+p.name+" Running", 60*time.Second, func() (bool, error) {
			got, err := h.Kube.CoreV1().Pods(p.ns).Get(h.Ctx, p.name, metav1.GetOptions{})
			return err == nil && got.Status.Phase == corev1.PodRunning, err
		})
	}

	ref := h.NS + "/" + head.Name
	cases := []struct {
		name string
		args []string
		code int
		line string
	}{
		{"non-Ray pod", []string{"disk-pressure", "pod/plain", "--size", "1Gi", "--yes"}, 2,
			"refusing pod " + h.NS + "/plain: it is not a Ray pod (no label ray.io/is-ray-node=yes); chaos targets Ray pods only"},
		{"kube-system", []string{"disk-pressure", "pod/" + sysPod, "-n", "kube-system", "--size", "1Gi", "--yes"}, 2,
			"refusing to put pressure on pods in kube-system: it is never a chaos target"},
		{"pod not Running", []string{"disk-pressure", "pod/pending", "--size", "1Gi", "--yes"}, 2,
			"pod " + h.NS + "/pending is Pending, not Running; an ephemeral container can only join a running pod"},
		{"container not found", []string{"disk-pressure", "ref", "--target-container", "nope", "--size", "1Gi", "--yes"}, 5,
			`container "nope" not found in pod ` + ref + "; it has: ray-head (pass one with --target-container)"},
		// The same not-found line as doctor and heal (TestSameInputErrorsAcrossCommands).
		{"no such cluster", []string{"disk-pressure", "nocluster", "--size", "1Gi", "--yes"}, 5,
			`RayCluster "nocluster" not found in namespace "` + h.NS + `"; list them with: kubectl get rayclusters -n ` + h.NS},
		{"no such pod", []string{"disk-pressure", "pod/nopod", "--size", "1Gi", "--yes"}, 5,
			`Pod "nopod" not found in namespace "` + h.NS + `"; list them with: kubectl get pods -n ` + h.NS},
		{"no amount", []string{"disk-pressure", "ref", "--yes"}, 2,
			"say how much: pass --size (e.g. 10Gi) or --percent (1-100)"},
		{"percent zero", []string{"memory-pressure", "ref", "--percent", "0", "--yes"}, 2,
			"--percent 0 is out of range: use 1 to 100"},
		{"malformed size", []string{"disk-pressure", "ref", "--size", "10GB", "--yes"}, 2,
			`--size "10GB" is not a quantity: use e.g. 512Mi, 10Gi or 2G`},
		{"negative size", []string{"disk-pressure", "ref", "--size", "-1Gi", "--yes"}, 2,
			`--size "-1Gi" must be a positive whole number of bytes, e.g. 10Gi`},
		{"size above the cap", []string{"disk-pressure", "ref", "--size", "200Gi", "--yes"}, 2,
			"--size 200Gi is above the 100Gi cap: pass --force to go beyond it"},
		{"fractional bytes", []string{"memory-pressure", "ref", "--bytes", "0.5", "--yes"}, 2,
			`--bytes "0.5" must be a positive whole number of bytes, e.g. 10Gi`},
		{"percent out of range", []string{"disk-pressure", "ref", "--percent", "101", "--yes"}, 2,
			"--percent 101 is out of range: use 1 to 100"},
		{"negative percent", []string{"memory-pressure", "ref", "--percent", "-5", "--yes"}, 2,
			"--percent -5 is out of range: use 1 to 100"},
		{"size and percent", []string{"disk-pressure", "ref", "--size", "1Gi", "--percent", "50", "--yes"}, 2,
			"say how much: pass --size (e.g. 10Gi) or --percent (1-100), not both"},
		{"percent of free disk above the cap", []string{"disk-pressure", "ref", "--percent", "99", "--yes"}, 2,
			"--percent 99 of the node's free disk leaves too little for other pods: use at most 95, or pass --force"},
		{"bad fill", []string{"disk-pressure", "ref", "--size", "1Gi", "--fill", "disk", "--yes"}, 2,
			`--fill must be node or container, not "disk"`},
		{"duration too short", []string{"disk-pressure", "ref", "--size", "1Gi", "--duration", "500ms", "--yes"}, 2,
			"--duration 500ms is too short: use at least 1s"},
		{"no --yes and no terminal", []string{"disk-pressure", "ref", "--size", "1Gi"}, 6,
			"refusing to add ephemeral container kubectl-ray-disk-pressure-SUFFIX to pod " + ref + " on node " + head.Spec.NodeName +
				" (node disk: 1Gi, for 2m0s) without --yes; ephemeral containers cannot be removed (it stays in the pod spec until the pod is deleted); pass --yes, or run in a terminal to confirm"},
		// RBAC: sandbox-reader may read pods but not patch pods/ephemeralcontainers, for real or
		// as a dry run; a user with no RBAC at all cannot even read the pod.
		{"reader", []string{"--context", "sandbox-reader", "disk-pressure", "ref", "--size", "1Gi", "--yes"}, 4,
			`forbidden: you cannot patch pods/ephemeralcontainers ` + podWhere(h.NS, head.Name) + `; ask for RBAC verb "patch" on "pods/ephemeralcontainers" (check with: kubectl auth can-i patch pods/ephemeralcontainers -n ` + h.NS + ")"},
		{"reader dry run", []string{"--context", "sandbox-reader", "disk-pressure", "ref", "--size", "1Gi", "--dry-run"}, 4,
			`forbidden: you cannot patch pods/ephemeralcontainers ` + podWhere(h.NS, head.Name) + `; ask for RBAC verb "patch" on "pods/ephemeralcontainers" (check with: kubectl auth can-i patch pods/ephemeralcontainers -n ` + h.NS + ")"},
		{"user without RBAC", []string{"--as", "nobody", "disk-pressure", "pod/" + head.Name, "--size", "1Gi", "--yes"}, 4,
			`forbidden: you cannot get pods ` + podWhere(h.NS, head.Name) + `; ask for RBAC verb "get" on "pods" (check with: kubectl auth can-i get pods -n ` + h.NS + ")"},
	}
	for _, c := range cases {
		args := append([]string{"chaos"}, c.args...)
		// Global flags go before the subcommand; keep them there.
		if c.args[0] == "--context" || c.args[0] == "--as" {
			args = append(append([]string{}, c.args[:2]...), append([]string{"chaos"}, c.args[2:]...)...)
		}
		res := h.Run(args...)
		line := c.line
		if strings.Contains(line, "SUFFIX") {
			line = strings.Replace(line, "SUFFIX", suffixIn(t, res.Stderr), 1)
		}
		if res.Code != c.code || res.Stdout != "" || res.Stderr != "error: "+line+"\n" {
			t.Errorf("%s: want exit %d and the one line\n  error: %s\ngot %s", c.name, c.code, line, res)
		}
		for _, p := range []struct{ ns, name string }{{h.NS, head.Name}, {h.NS, "plain"}, {h.NS, "pending"}, {"kube-system", sysPod}} {
			got, err := h.Kube.CoreV1().Pods(p.ns).Get(h.Ctx, p.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Spec.EphemeralContainers) != 0 {
				t.Fatalf("%s: pod %s/%s got an ephemeral container", c.name, p.ns, p.name)
			}
		}
	}
}

// podWhere is how kube.Explain names where the request went.
func podWhere(ns, _ string) string {
	return fmt.Sprintf("in namespace %q", ns)
}
