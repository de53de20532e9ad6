package repair

import (
	"context"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// deletingGCSFT is a RayCluster deleted 20m before t0, held by KubeRay's Redis cleanup finalizer
// next to someone else's.
func deletingGCSFT() rayv1.RayCluster {
	c := cluster("ml", "rc")
	c.ResourceVersion = "42"
	c.Finalizers = []string{"example.com/keep", ray.FinalizerGCSFTRedisCleanup}
	c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	dt := metav1.NewTime(t0.Add(-20 * time.Minute))
	c.DeletionTimestamp = &dt
	return c
}

func gcsFTPlan(t *testing.T, c rayv1.RayCluster, opts Options) HealPlan {
	t.Helper()
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}}
	return Plan(s, diagnose.Diagnose(s, diagnose.DefaultOptions()).Findings, opts)
}

// Without --remove-gcs-ft-finalizer heal never removes the finalizer: it says how, and what stays
// in Redis. With it, the removal names the finalizer's index and the resourceVersion seen.
func TestPlanGCSFTFinalizer(t *testing.T) {
	c := deletingGCSFT()
	p := gcsFTPlan(t, c, Options{Name: asFlag})
	if !p.Empty() || len(p.FinalizerRemovals) != 0 || p.FinalizersStuck != 1 || len(p.NotHealable) != 1 {
		t.Fatalf("without the flag: %+v", p)
	}
	if why := p.NotHealable[0].Why; !strings.Contains(why, "only with --remove-gcs-ft-finalizer") || !strings.Contains(why, "storage namespace uid-rc stays in Redis") {
		t.Errorf("skip reason: %q", why)
	}
	p = gcsFTPlan(t, c, Options{RemoveGCSFTFinalizer: true})
	if p.Empty() || len(p.FinalizerRemovals) != 1 || len(p.NotHealable) != 0 {
		t.Fatalf("with the flag: %+v", p)
	}
	r := p.FinalizerRemovals[0]
	if r.Index != 1 || r.ResourceVersion != "42" || r.Cluster.UID != "uid-rc" || r.StorageNamespace != "uid-rc" || r.Finalizer != ray.FinalizerGCSFTRedisCleanup {
		t.Errorf("removal = %+v", r)
	}
}

// A cleanup Job that completed left nothing in Redis: heal says so, from doctor's typed fact, not
// from the wording of its evidence.
func TestPlanGCSFTFinalizerAfterCleanup(t *testing.T) {
	c := deletingGCSFT()
	job := batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "rc-redis-cleanup", Labels: map[string]string{"ray.io/cluster": "rc"}},
		Status:     batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}},
	}
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, CleanupJobs: []batchv1.Job{job}}
	findings := diagnose.Diagnose(s, diagnose.DefaultOptions()).Findings
	var stuck []diagnose.Finding
	for _, f := range findings {
		if f.Rule == diagnose.RuleGCSFTFinalizerStuck {
			stuck = append(stuck, f)
		}
	}
	if len(stuck) != 1 || !stuck[0].Facts.CleanupJobComplete {
		t.Fatalf("findings = %+v, want one gcs-ft-finalizer-stuck with CleanupJobComplete", findings)
	}
	p := Plan(s, findings, Options{RemoveGCSFTFinalizer: true})
	if len(p.FinalizerRemovals) != 1 || p.FinalizerRemovals[0].LeftBehind != "the cleanup Job completed: nothing of storage namespace uid-rc is left in Redis" {
		t.Fatalf("removals = %+v", p.FinalizerRemovals)
	}
}

type eventRecorder struct{ events []*corev1.Event }

func (e *eventRecorder) CreateEvent(_ context.Context, ev *corev1.Event, _ bool) error {
	e.events = append(e.events, ev)
	return nil
}

// The removal is a JSON patch with test operations: it removes exactly the one finalizer when the
// RayCluster is as seen, and nothing when it changed (here: another resourceVersion).
func TestExecuteFinalizerRemoval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stored  string // resourceVersion in the API
		dryRun  bool
		result  Result
		remains []string
	}{
		{"as seen", "42", false, Removed, []string{"example.com/keep"}},
		{"dry run", "42", true, DryRun, []string{"example.com/keep", ray.FinalizerGCSFTRedisCleanup}},
		{"changed since", "43", false, Failed, []string{"example.com/keep", ray.FinalizerGCSFTRedisCleanup}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := deletingGCSFT()
			plan := gcsFTPlan(t, c, Options{RemoveGCSFTFinalizer: true})
			stored := c.DeepCopy()
			stored.ResourceVersion = tc.stored
			rc := rayfake.NewSimpleClientset(stored)
			clients := &kube.Clients{Kube: fake.NewClientset(), Ray: rc}
			ev := &eventRecorder{}
			ex := &Executor{Deleter: clients, Events: ev, Finalizers: clients, DryRun: tc.dryRun, Now: func() time.Time { return t0 }}
			if tc.dryRun {
				// The fake tracker ignores dryRun: play the API server, which changes nothing.
				rc.PrependReactor("patch", "rayclusters", func(k8stesting.Action) (bool, runtime.Object, error) { return true, stored, nil })
			}
			rep, err := ex.Run(context.Background(), plan)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Finalizers) != 1 || rep.Finalizers[0].Result != tc.result {
				t.Fatalf("outcomes = %+v", rep.Finalizers)
			}
			got, err := rc.RayV1().RayClusters("ml").Get(context.Background(), "rc", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Finalizers, ",") != strings.Join(tc.remains, ",") {
				t.Errorf("finalizers = %v, want %v", got.Finalizers, tc.remains)
			}
			if tc.result == Failed {
				if len(ev.events) != 0 || rep.Problems() != 1 {
					t.Errorf("a refused removal records no Event and counts as a problem: %d events, %d problems", len(ev.events), rep.Problems())
				}
				return
			}
			if len(ev.events) != 1 || ev.events[0].Reason != EventReasonFinalizer || !strings.Contains(ev.events[0].Message, "storage namespace uid-rc stays in Redis") {
				t.Errorf("events = %+v", ev.events)
			}
			if !strings.Contains(rep.Finalizers[0].Message, "stays in Redis") {
				t.Errorf("message %q does not warn what stays in Redis", rep.Finalizers[0].Message)
			}
		})
	}
}
