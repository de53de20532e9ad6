package kube

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The long-running modes cache pods encoded: what ClusterPods gives back is the pod as stored,
// and the indexes and handlers still find each pod's RayCluster and node without decoding it.
func TestInformersCachePodsPacked(t *testing.T) {
	RouteClientLogs(func(string, string, ...any) {})
	pod := func(name, cluster, node string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name),
				Labels: map[string]string{ray.LabelCluster: cluster, "ray.io/is-ray-node": "yes", "ray.io/node-type": "worker"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "ray-worker"}}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
				StartTime: &metav1.Time{Time: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)}},
		}
	}
	a1, a2, b1 := pod("a-1", "a", "node-1"), pod("a-2", "a", "node-2"), pod("b-1", "b", "node-1")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	kc := kfake.NewClientset(a1, a2, b1, node)
	var mu sync.Mutex
	var heard []string
	cl := &Clients{Kube: kc, Ray: rayfake.NewSimpleClientset()}
	h, err := cl.NewClusterInformers("ml", true, CacheShape{}, func(k types.NamespacedName) {
		mu.Lock()
		heard = append(heard, k.String())
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, o := range h.pods.GetStore().List() {
		if _, ok := o.(*packedPod); !ok {
			t.Fatalf("cached %T, want *packedPod", o)
		}
	}
	got := h.ClusterPods(types.NamespacedName{Namespace: "ml", Name: "a"})
	slices.SortFunc(got, func(x, y *corev1.Pod) int { return strings.Compare(x.Name, y.Name) })
	if len(got) != 2 || !equality.Semantic.DeepEqual(got[0], a1) || !equality.Semantic.DeepEqual(got[1], a2) {
		t.Fatalf("ClusterPods(ml/a) = %+v, want a-1 and a-2 as listed", got)
	}
	if got[0] == h.ClusterPods(types.NamespacedName{Namespace: "ml", Name: "a"})[0] {
		t.Error("ClusterPods handed out the same pod twice: callers may change what they get")
	}

	// A node's change reaches the clusters of the pods on it (the byNode index), and a deleted
	// pod's cluster hears of it.
	waitHeard := func(want string) {
		t.Helper()
		for ctx.Err() == nil {
			mu.Lock()
			ok := slices.Contains(heard, want)
			heard = nil
			mu.Unlock()
			if ok {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("never heard of %s", want)
	}
	waitHeard("ml/b") // the initial list
	node.Labels = map[string]string{"changed": "yes"}
	if _, err := kc.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitHeard("ml/b")
	if err := kc.CoreV1().Pods("ml").Delete(ctx, "b-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitHeard("ml/b")
	for ctx.Err() == nil && len(h.ClusterPods(types.NamespacedName{Namespace: "ml", Name: "b"})) != 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(h.ClusterPods(types.NamespacedName{Namespace: "ml", Name: "b"})); n != 0 {
		t.Errorf("deleted pod still cached (%d)", n)
	}
}
