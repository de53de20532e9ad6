package manifest

import (
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

func operatorDeployment(image string, args ...string) appsv1.Deployment {
	return appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ray-system", Name: "kuberay-operator"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "kuberay-operator", Image: image, Args: args}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1}}
}

// doctor -f against a KubeRay v1.7.0 operator reads the v1.7.0 fields the API types drop and
// predicts the operator's refusal word for word: historyServerOptions and networkPolicy without
// their gates (off by default), a worker group's priority without Ray 2.56.0. The gates turned on
// by --feature-gates, or an older operator (its CRD drops the fields: field-dropped), or no
// operator known: silent.
func TestV17GatedRefusals(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/gated/v17-gated.yaml"}})
	refused := func(deploys ...appsv1.Deployment) []string {
		snap := s.Snapshot("ml", time.Unix(0, 0))
		snap.Deployments = deploys
		var got []string
		for _, f := range diagnose.Diagnose(snap, diagnose.Options{SpecOnly: true}).Findings {
			if f.Rule == diagnose.RuleSpecRefused {
				got = append(got, f.Message+" | "+f.Remedy)
			}
		}
		sort.Strings(got)
		return got
	}
	got := refused(operatorDeployment("quay.io/kuberay/operator:v1.7.0"))
	want := []string{
		`RayCluster ml/history and creates nothing of it: "The RayCluster spec is invalid ml/history: RayClusterHistoryServer feature gate is not enabled" (KubeRay v1.7.0's own validation, with the operator's feature gates as its --feature-gates set them (v1.7.0 turns this one off by default); the Warning Event InvalidRayClusterSpec)` +
			` | turn the feature gate on: add --feature-gates=RayClusterHistoryServer=true to the KubeRay operator's args (kubectl edit deploy/kuberay-operator -n ray-system), or the Helm chart's featureGates, or remove historyServerOptions from the spec`,
		`RayCluster ml/prioritised and creates nothing of it: "The RayCluster spec is invalid ml/prioritised: worker group fast: priority is set, but minimum Ray version is 2.56.0, got 2.52.0" (KubeRay v1.7.0's own validation; the Warning Event InvalidRayClusterSpec)` +
			` | set rayVersion to 2.56.0 or later and autoscalerOptions.version to v2 (the priority is the autoscaler v2's), or remove worker group fast's priority`,
		`RayService ml/policed and creates nothing of it: "ml/policed: The RayService spec is invalid: spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled"`,
	}
	if len(got) != len(want) {
		t.Fatalf("spec-refused against v1.7.0 with its default gates:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("got\n%s\nwant it to hold\n%s", got[i], want[i])
		}
	}
	gates := "--feature-gates=RayClusterHistoryServer=true,RayClusterNetworkPolicy=true"
	if got := refused(operatorDeployment("quay.io/kuberay/operator:v1.7.0", gates)); len(got) != 1 || !strings.Contains(got[0], "prioritised") {
		t.Errorf("with %s, want only the priority refused: %q", gates, got)
	}
	for _, deploys := range [][]appsv1.Deployment{nil, {operatorDeployment("quay.io/kuberay/operator:v1.6.0")}} {
		if got := refused(deploys...); len(got) != 0 {
			t.Errorf("no v1.7.0 operator (%d deployments): want no refusal of v1.7.0's, got %q", len(deploys), got)
		}
	}
}
