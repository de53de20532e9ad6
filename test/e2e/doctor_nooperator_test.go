package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// rayPod is a pod as KubeRay labels it, bound to node (nodeName skips the scheduler); kwok runs it.
func rayPod(name, cluster, nodeType, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"ray.io/cluster": cluster, "ray.io/node-type": nodeType, "ray.io/is-ray-node": "yes",
			"app.kubernetes.io/created-by": "kuberay-operator", "app.kubernetes.io/name": "kuberay",
		}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "ray-" + nodeType, Image: "rayproject/ray:2.9.0"}}},
	}
}

// A sandbox with no KubeRay operator (its own: stopping the shared one would break other tests).
// Nothing reconciles, so the test makes the pods KubeRay would make, and the states no operator
// could be relied on to hold still: two heads, none, one. Last, the rayclusters CRD is deleted.
func TestDoctorWithoutOperator(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := sandbox.Up(ctx, sandbox.Config{Dir: filepath.Join(env.work, "sandbox-doctor-none"), Operator: sandbox.OperatorNone, Nodes: 1, DieWithParent: true}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Down() })
	h := newHOn(t, sb)
	node := sandbox.NodeName(0)

	h.CreateRayCluster("nohead", nil)
	h.CreateRayCluster("twoheads", nil)
	h.CreateRayCluster("one", nil)
	pods := []*corev1.Pod{
		rayPod("twoheads-head-old", "twoheads", "head", node),
		rayPod("twoheads-worker-a", "twoheads", "worker", node),
		rayPod("one-head-x", "one", "head", node),
		rayPod("one-worker-x", "one", "worker", node),
	}
	for _, p := range pods {
		if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The second head comes later: it is the newer one doctor keeps.
	time.Sleep(1100 * time.Millisecond)
	if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, rayPod("twoheads-head-new", "twoheads", "head", node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitClusterRunning("one", 60*time.Second)
	h.WaitFor("both heads of twoheads Running", 60*time.Second, func() (bool, error) {
		heads := h.Pods("twoheads", "head")
		return len(heads) == 2 && PodRunningReady(&heads[0]) && PodRunningReady(&heads[1]), nil
	})

	d, res := h.doctorJSON()
	if res.Code != 1 {
		t.Fatalf("%s", res)
	}
	wantRules(t, d, "", "operator-missing deployment/kuberay-operator")
	wantContains(t, "operator-missing", d.finding(t, "", "operator-missing").Message, "no KubeRay operator Deployment found in any namespace you can list")
	wantRules(t, d, "one")
	wantRules(t, d, "nohead") // younger than the 2m the operator gets to create a head
	wantRules(t, d, "twoheads", rule("head-duplicate", "pod", "twoheads-head-old"))
	dup := d.finding(t, "twoheads", "head-duplicate")
	wantContains(t, "head-duplicate", dup.Message, "has 2 head pods (twoheads-head-new, twoheads-head-old); twoheads-head-old is an extra head (Running, Ready)")
	if dup.Evidence["kept"] != "twoheads-head-new" {
		t.Errorf("evidence %v", dup.Evidence)
	}
	if len(d.Operators) != 0 {
		t.Errorf("operators %+v", d.Operators)
	}

	// head-missing once the cluster is older than the operator's grace (2m).
	var f drFinding
	h.WaitFor("doctor to report head-missing", 150*time.Second, func() (bool, error) {
		time.Sleep(2 * time.Second) // WaitFor polls every 200ms; a doctor run each time is needless load
		d, _ = h.doctorJSON()
		for _, x := range d.Findings {
			if x.Rule == "head-missing" {
				f = x
				return true, nil
			}
		}
		return false, nil
	})
	wantRules(t, d, "nohead", "head-missing raycluster/nohead")
	wantContains(t, "head-missing", f.Message, "RayCluster "+h.NS+"/nohead has no head pod; no running KubeRay operator was found")
	wantContains(t, "head-missing remedy", f.Remedy, "start the KubeRay operator")

	// An operator newer than the releases this build was read against: its Deployment's image says
	// v1.8.0 (the test makes the Deployment; kwok runs its pod, nothing runs an operator in it).
	// doctor says so once, as info, and judges it as the newest release it knows.
	one := int32(1)
	labels := map[string]string{"app.kubernetes.io/name": "kuberay-operator"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "kuberay-operator", Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kuberay-operator", Image: "quay.io/kuberay/operator:v1.8.0"}}}}}}
	if _, err := h.Kube.AppsV1().Deployments(h.NS).Create(h.Ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the v1.8.0 operator's Deployment to be ready", 60*time.Second, func() (bool, error) {
		got, err := h.Kube.AppsV1().Deployments(h.NS).Get(h.Ctx, dep.Name, metav1.GetOptions{})
		return err == nil && got.Status.ReadyReplicas == 1, err
	})
	d, _ = h.doctorJSON()
	wantRules(t, d, "", "operator-newer deployment/kuberay-operator")
	newer := d.finding(t, "", "operator-newer")
	wantContains(t, "operator-newer", newer.Message, "runs v1.8.0, newer than the releases this doctor was built against (up to v1.7.0)", "judge it as v1.7.0 does")
	if newer.Severity != "info" || newer.Evidence["judgedAs"] != "v1.7.0" {
		t.Errorf("operator-newer: severity %s, evidence %v", newer.Severity, newer.Evidence)
	}
	if v := h.Run("version", "-o", "json"); v.Code != 0 || !strings.Contains(v.Stdout, `"version": "v1.8.0"`) {
		t.Errorf("kubectl ray version does not show the operator's release: %s", v)
	}

	// Without the rayclusters CRD: KubeRay is not installed.
	dyn, err := dynamic.NewForConfig(sb.Admin)
	if err != nil {
		t.Fatal(err)
	}
	crd := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if err := dyn.Resource(crd).Delete(h.Ctx, "rayclusters.ray.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the rayclusters API to go away", 60*time.Second, func() (bool, error) {
		_, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err), nil
	})
	wantOneLineError(t, h.Run("doctor"), 3, "KubeRay is not installed in this cluster: the API has no rayclusters.ray.io",
		"install the KubeRay CRDs and operator, or pick another --context")
	wantOneLineError(t, h.Run("doctor", "-A", "-o", "json"), 3, "KubeRay is not installed")
}
