package headkill

import (
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

var t0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

func headPod(name, cluster string, phase corev1.PodPhase, node string, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{ray.LabelCluster: cluster, ray.LabelNodeType: "head"}},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func render(tl *timeline.Timeline) string {
	var b strings.Builder
	for _, e := range tl.Events() {
		fmt.Fprintf(&b, "%d %s %s %s>%s %s\n", e.At.Sub(t0).Milliseconds(), e.Kind, e.Object, e.From, e.To, e.Detail)
	}
	return b.String()
}

func TestTrackerHeadKill(t *testing.T) {
	old := headPod("demo-head-a", "demo", corev1.PodRunning, "n1", true)
	tr := NewTracker(old, "demo")
	// Before the kill: the old head and a worker endpoint; the cluster is ready.
	tr.Endpoints([]string{"demo-head-a", "demo-worker-1"}, ms(0))
	tr.RayCluster(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: rayv1.RayClusterStatus{State: rayv1.Ready}}, false, ms(0))
	tr.Pod(old, false, ms(0))
	// A head of another cluster is never the new head.
	tr.Pod(headPod("other-head", "other", corev1.PodRunning, "n1", true), false, ms(10))
	if ok, _ := tr.Recovered(); ok || tr.State() != "head demo-head-a up" {
		t.Fatalf("before the kill: recovered %v state %q", ok, tr.State())
	}

	tr.Disrupted("delete", ms(1000))
	terminating := old.DeepCopy()
	now := metav1.NewTime(ms(1000))
	terminating.DeletionTimestamp = &now
	tr.Pod(terminating, false, ms(1005)) // terminating is not gone
	if tr.State() != "head demo-head-a terminating" {
		t.Fatalf("state %q", tr.State())
	}
	tr.Endpoints([]string{"demo-worker-1"}, ms(1010))
	tr.Pod(terminating, true, ms(1020))
	tr.RayCluster(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, false, ms(1030))
	tr.Pod(headPod("demo-head-b", "demo", corev1.PodPending, "", false), false, ms(1100))
	tr.Pod(headPod("demo-head-b", "demo", corev1.PodPending, "n2", false), false, ms(1150))
	tr.Pod(headPod("demo-head-b", "demo", corev1.PodRunning, "n2", false), false, ms(2000))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the new head is Ready")
	}
	tr.Pod(headPod("demo-head-b", "demo", corev1.PodRunning, "n2", true), false, ms(2500))
	tr.Pod(headPod("demo-head-b", "demo", corev1.PodRunning, "n2", true), false, ms(2600)) // no repeat
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the endpoints are back")
	}
	tr.Endpoints([]string{"demo-worker-1", "demo-head-b"}, ms(2700))
	tr.RayCluster(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: rayv1.RayClusterStatus{State: rayv1.Ready}}, false, ms(2800))
	ok, since := tr.Recovered()
	if !ok || !since.Equal(ms(2800)) || tr.State() != "new head demo-head-b Ready" {
		t.Fatalf("recovered %v since %v state %q", ok, since, tr.State())
	}
	want := `0 EndpointAdded demo-head-a > 
0 EndpointAdded demo-worker-1 > 
0 RayClusterState demo >ready first seen
1000 KillRequested demo-head-a > delete
1010 EndpointRemoved demo-head-a > 
1020 OldHeadGone demo-head-a > 
1030 RayClusterState demo ready> 
1100 NewHeadCreated demo-head-b > 
1150 NewHeadScheduled demo-head-b > 
2000 NewHeadRunning demo-head-b > 
2500 NewHeadReady demo-head-b > 
2700 EndpointAdded demo-head-b > 
2800 RayClusterState demo >ready 
`
	if got := render(tr.Timeline()); got != want {
		t.Fatalf("timeline:\n%s\nwant:\n%s", got, want)
	}
}

func TestTrackerRayServiceSwitch(t *testing.T) {
	old := headPod("svc-abc-head-a", "svc-abc", corev1.PodRunning, "n1", true)
	tr := NewTracker(old, "svc-abc")
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc"}}
	rs.Status.ActiveServiceStatus.RayClusterName = "svc-abc"
	tr.RayService(rs, ms(0))
	tr.Disrupted("force", ms(100))
	tr.Refused("ignored for this test", ms(100))
	// KubeRay builds a new cluster: pending, then active. Its head is the new head.
	rs2 := rs.DeepCopy()
	rs2.Status.PendingServiceStatus.RayClusterName = "svc-xyz"
	tr.RayService(rs2, ms(200))
	tr.Pod(headPod("svc-xyz-head-b", "svc-xyz", corev1.PodRunning, "n2", true), false, ms(300))
	rs3 := rs.DeepCopy()
	rs3.Status.ActiveServiceStatus.RayClusterName = "svc-xyz"
	tr.RayService(rs3, ms(400))
	want := `100 KillRequested svc-abc-head-a > force
100 KillRefused svc-abc-head-a > ignored for this test
200 RayServicePendingCluster svc >svc-xyz 
300 NewHeadCreated svc-xyz-head-b > 
300 NewHeadScheduled svc-xyz-head-b > 
300 NewHeadRunning svc-xyz-head-b > 
300 NewHeadReady svc-xyz-head-b > 
400 RayServiceActiveCluster svc svc-abc>svc-xyz 
400 RayServicePendingCluster svc svc-xyz> 
`
	if got := render(tr.Timeline()); got != want {
		t.Fatalf("timeline:\n%s\nwant:\n%s", got, want)
	}
	// Without a probed Service, a Ready new head is recovery.
	if ok, _ := tr.Recovered(); !ok {
		t.Fatal("not recovered")
	}
}
