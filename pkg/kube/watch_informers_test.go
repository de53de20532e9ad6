package kube

import (
	"context"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// heal --watch's caches hold trimmed objects, as doctor's loader does, and its snapshots still
// carry the secrets of what was trimmed.
func TestHealInformersTrimAndKeepSecrets(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a-head", Namespace: "ml", UID: "u1", ResourceVersion: "7",
			Annotations: map[string]string{"big": "x"},
			Labels:      map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "a", ray.LabelNodeType: "head"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "ray-head",
			Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "podPassw0rd"}}}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"rayproject/ray:2.9.0"}}}}}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ml"},
		Spec: rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ray-head", Env: []corev1.EnvVar{{Name: "API_TOKEN", Value: "clusterT0ken"}}}}}}}}}
	c := &Clients{Kube: kfake.NewClientset(pod, node), Ray: rayfake.NewSimpleClientset(rc)}
	// As heal --watch does: client-go's logs are routed before any informer runs.
	RouteClientLogs(func(string, string, ...any) {})
	h, err := c.NewClusterInformers("ml", true, func(types.NamespacedName) {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s, ok := h.Snapshot(types.NamespacedName{Namespace: "ml", Name: "a"}, time.Now())
	if !ok || len(s.Pods) != 1 || len(s.Nodes) != 1 {
		t.Fatalf("snapshot = %+v", s)
	}
	if p := s.Pods[0]; !containersTrimmed(p) || len(p.Annotations) != 0 || p.UID != "u1" || p.Spec.NodeName != "node-1" {
		t.Errorf("cached pod not trimmed: %+v", p)
	}
	if cs := s.Clusters[0].Spec.HeadGroupSpec.Template.Spec.Containers; len(s.Nodes[0].Status.Images) != 0 || len(cs) != 1 || len(cs[0].Env) != 0 {
		t.Errorf("cached node or cluster not trimmed: %+v %+v", s.Nodes[0], s.Clusters[0])
	}
	for _, secret := range []string{"podPassw0rd", "clusterT0ken"} {
		if _, ok := s.Secrets[secret]; !ok {
			t.Errorf("snapshot secrets = %v, want %q", s.Secrets, secret)
		}
	}
}

// The informers' first LIST is paged (resourceVersion "0" would be answered in one piece from the
// API server's cache) and each page is trimmed before the next is read.
func TestTrimmedPages(t *testing.T) {
	h := &ClusterInformers{secrets: diagnose.Secrets{}}
	var asked metav1.ListOptions
	lw := h.trimmedPages(&cache.ListWatch{ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
		asked = o
		return &corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"big": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "s3cret"}}}}}}}}, nil
	}})
	obj, err := lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if asked.ResourceVersion != "" || asked.Limit != 500 {
		t.Errorf("listed with %+v, want resourceVersion \"\" and limit 500", asked)
	}
	p := obj.(*corev1.PodList).Items[0]
	if !containersTrimmed(p) || len(p.Annotations) != 0 {
		t.Errorf("page not trimmed: %+v", p)
	}
	if _, ok := h.secrets["s3cret"]; !ok {
		t.Errorf("the trimmed secret is not kept for the redactor: %v", h.secrets)
	}
}
