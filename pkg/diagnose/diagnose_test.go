package diagnose

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// secretFixture is healthy.yaml with testdata/secrets.yaml laid over it.
func secretFixture(t *testing.T) state.Snapshot {
	t.Helper()
	base := loadFixture(t, "healthy").snap
	objs, _ := readObjects(t, "testdata/secrets.yaml")
	for _, o := range objs {
		switch o.kind {
		case "RayCluster":
			for i := range base.Clusters {
				if base.Clusters[i].Name == o.name {
					base.Clusters[i] = unmarshal(t, o.raw, base.Clusters[i])
				}
			}
		case "Pod":
			for i := range base.Pods {
				if base.Pods[i].Name == o.name {
					base.Pods[i] = unmarshal(t, o.raw, base.Pods[i])
				}
			}
		}
	}
	return base
}

func unmarshal[T any](t *testing.T, raw []byte, _ T) T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// No secret value reaches a report, in any field, however the kubelet or a user quoted it.
func TestNoSecretInReport(t *testing.T) {
	s := secretFixture(t)
	r := Diagnose(&s, DefaultOptions())
	if len(r.Findings) == 0 {
		t.Fatal("the fixture must produce findings, or this test checks nothing")
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, secret := range []string{"Sup3rS3cretRedis", "An0therPw", "ray-redis-credentials"} {
		if strings.Contains(out, secret) {
			t.Errorf("report contains %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "low on resource: memory") || !strings.Contains(out, redact.Redacted) {
		t.Errorf("the kubelet message should be quoted with the password redacted:\n%s", out)
	}
	// The redactor must not have written into the snapshot.
	if !strings.Contains(s.Pods[0].Status.Message+s.Pods[1].Status.Message+s.Pods[2].Status.Message+s.Pods[3].Status.Message, "Sup3rS3cretRedis") {
		t.Error("snapshot was modified")
	}
}

// Clusters carry their owner; a target narrows the report to an owner's clusters.
func TestOwnersAndTargets(t *testing.T) {
	f := loadFixture(t, "healthy")
	r := Diagnose(&f.snap, DefaultOptions())
	if len(r.Clusters) != 2 {
		t.Fatalf("clusters = %+v", r.Clusters)
	}
	if o := r.Clusters[1].Owner; o == nil || o.Kind != "RayService" || o.Name != "svc" {
		t.Errorf("owner of %s = %+v, want RayService svc", r.Clusters[1].Name, o)
	}
	if r.Clusters[0].Owner != nil || r.Clusters[0].Health != HealthHealthy {
		t.Errorf("cluster 0 = %+v", r.Clusters[0])
	}
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Target{Kind: "RayService", Name: "svc"}, "svc-raycluster-q7x9z"},
		{Target{Name: "svc"}, "svc-raycluster-q7x9z"},
		{Target{Kind: "RayCluster", Name: "raycluster-a"}, "raycluster-a"},
		{Target{Kind: "RayCluster", Name: "svc"}, ""},
	} {
		r := DiagnoseTarget(&f.snap, DefaultOptions(), &tc.t)
		var names []string
		for _, c := range r.Clusters {
			names = append(names, c.Name)
		}
		if strings.Join(names, ",") != tc.want {
			t.Errorf("%+v: clusters %v, want %q", tc.t, names, tc.want)
		}
	}
	if !Has(&f.snap, Target{Kind: "rayservice", Name: "svc"}) || Has(&f.snap, Target{Kind: "RayJob", Name: "svc"}) || Has(&f.snap, Target{Name: "nope"}) {
		t.Error("Has is wrong")
	}
}

// A RayJob's cluster is reported with the RayJob as owner, found through the job's status.
func TestRayJobOwner(t *testing.T) {
	f := loadFixture(t, "healthy")
	var job rayv1.RayJob
	if err := yaml.UnmarshalStrict([]byte(`
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: train, namespace: ml, uid: job-uid}
status: {rayClusterName: raycluster-a}
`), &job); err != nil {
		t.Fatal(err)
	}
	f.snap.Jobs = append(f.snap.Jobs, job)
	r := DiagnoseTarget(&f.snap, DefaultOptions(), &Target{Kind: "RayJob", Name: "train"})
	if len(r.Clusters) != 1 || r.Clusters[0].Owner == nil || *r.Clusters[0].Owner != (state.Ref{Kind: "RayJob", Namespace: "ml", Name: "train", UID: "job-uid"}) {
		t.Fatalf("clusters = %+v", r.Clusters)
	}
}

// The per-group view counts a group's pods (by KubeRay's ray.io/group label) against its desired
// count: a worker Running but not Ready counts as running, not ready; one being deleted does not
// count at all.
func TestGroupCounts(t *testing.T) {
	f := loadFixture(t, "healthy")
	for i := range f.snap.Clusters {
		if c := &f.snap.Clusters[i]; c.Name == "raycluster-a" {
			three := int32(3)
			c.Spec.WorkerGroupSpecs[0].Replicas = &three
		}
	}
	var extra []corev1.Pod
	for _, p := range f.snap.Pods {
		if p.Name == "raycluster-a-worker-small-xyz12" {
			notReady, deleting := *p.DeepCopy(), *p.DeepCopy()
			notReady.Name, deleting.Name = p.Name+"-2", p.Name+"-3"
			notReady.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			deleting.DeletionTimestamp = &metav1.Time{Time: fixtureNow}
			extra = append(extra, notReady, deleting)
		}
	}
	f.snap.Pods = append(f.snap.Pods, extra...)
	r := Diagnose(&f.snap, DefaultOptions())
	for _, c := range r.Clusters {
		if c.Name != "raycluster-a" {
			continue
		}
		want := []GroupReport{{Name: "small", Desired: 3, Pods: 2, Running: 2, Ready: 1}}
		if fmt.Sprint(c.Groups) != fmt.Sprint(want) {
			t.Errorf("groups %+v, want %+v", c.Groups, want)
		}
		return
	}
	t.Fatal("raycluster-a not in the report")
}
