package workerkill

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// killFake answers the two calls killNow makes; the embedded Cluster is nil (any other call panics).
type killFake struct {
	Cluster
	now    map[string]*corev1.Pod
	killed []*corev1.Pod
}

func (f *killFake) GetPodByName(_ context.Context, _, name string) (*corev1.Pod, error) {
	return f.now[name], nil
}

func (f *killFake) KillPod(_ context.Context, p *corev1.Pod, _ kube.KillMode, _ bool) error {
	f.killed = append(f.killed, p)
	return nil
}

// A worker is killed as it is now (its resourceVersion moved on during the warm-up), and a worker
// replaced meanwhile by a pod of the same name is left alone.
func TestKillNowReadsThePodAgain(t *testing.T) {
	read := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-a", UID: "uid-1", ResourceVersion: "10"}}
	later := read.DeepCopy()
	later.ResourceVersion = "12"
	f := &killFake{now: map[string]*corev1.Pod{"w-a": later}}
	if err := killNow(context.Background(), f, read, kube.KillDelete); err != nil || len(f.killed) != 1 || f.killed[0].ResourceVersion != "12" {
		t.Fatalf("killNow = %v, killed %+v; want the pod at resourceVersion 12", err, f.killed)
	}
	f.now["w-a"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-a", UID: "uid-2", ResourceVersion: "20"}}
	f.killed = nil
	if err := killNow(context.Background(), f, read, kube.KillDelete); err == nil || len(f.killed) != 0 {
		t.Fatalf("a replaced worker: err %v, killed %+v; want not found and nothing killed", err, f.killed)
	}
}
