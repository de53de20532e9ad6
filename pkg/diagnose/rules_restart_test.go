package diagnose

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// head-restart-disabled says "by design", names the RayJob, and never tells anyone to heal; no
// other finding about such a cluster tells them to either.
func TestHeadRestartDisabledDetails(t *testing.T) {
	cases := []struct {
		fixture, object string
		contains        []string
		evidence        map[string]string
	}{
		{"head-restart-disabled", "RayCluster ml/raycluster-a",
			[]string{"RayCluster ml/raycluster-a (RayJob nightly) has no head pod", "by design no new head will be created",
				"KubeRay v1.6.0 creates no new head", "kuberay #4234", "RayJob nightly ran on this cluster", "submit the RayJob again"},
			map[string]string{"rayJob": "nightly", "submissionMode": "SidecarMode", "annotation": "ray.io/disable-provisioned-head-restart=true", "operator": "KubeRay v1.6.0"}},
		{"head-restart-disabled-terminal-head", "Pod ml/raycluster-a-head-abcde",
			[]string{"head pod raycluster-a-head-abcde is Failed (Evicted); the operator deletes it", "by design", "kubectl annotate raycluster raycluster-a -n ml ray.io/disable-provisioned-head-restart-"},
			map[string]string{"pod": "raycluster-a-head-abcde", "phase": "Failed"}},
		{"head-restart-disabled-v150-rayjob", "RayCluster ml/raycluster-a",
			[]string{"(RayJob nightly)", "KubeRay v1.5.0 creates no new head for a provisioned RayCluster made by a RayJob", "kuberay #4141"},
			map[string]string{"rayJob": "nightly", "submissionMode": "K8sJobMode", "annotation": ""}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			f := loadFixture(t, c.fixture)
			r := Diagnose(&f.snap, DefaultOptions())
			for _, fd := range r.Findings {
				if strings.Contains(fd.Remedy, "kubectl ray heal") {
					t.Errorf("%s tells the user to heal: %s", fd.Rule, fd.Remedy)
				}
			}
			wantFinding(t, r.Findings, RuleHeadRestartDisabled, c.object, c.contains, c.evidence, false)
		})
	}
}

// What reconcilePods of each version does with a provisioned cluster that has no head.
func TestHeadRestartDisabledPerOperatorVersion(t *testing.T) {
	op := func(v string) []ray.Operator { return []ray.Operator{{Version: v, ReadyReplicas: 1}} }
	cluster := func(annotated, fromJob, provisioned bool) *rayv1.RayCluster {
		rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}, Labels: map[string]string{}}}
		if annotated {
			rc.Annotations[ray.AnnotationDisableProvisionedHeadRestart] = "true"
		}
		if fromJob {
			rc.Labels[ray.LabelOriginatedFromCRD] = "RayJob"
		}
		if provisioned {
			rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue}}
		}
		return rc
	}
	for _, c := range []struct {
		name                            string
		annotated, fromJob, provisioned bool
		ops                             []ray.Operator
		want                            bool
	}{
		{"v1.6.0 annotated", true, false, true, op("v1.6.0"), true},
		{"v1.6.0 annotated, not provisioned yet", true, false, false, op("v1.6.0"), false},
		{"v1.6.0 annotation \"false\"", false, true, true, op("v1.6.0"), false}, // K8sJobMode RayJob: v1.6 recreates
		{"v1.6.2 annotated", true, true, true, op("v1.6.2"), true},
		{"v1.5.0 RayJob cluster", false, true, true, op("v1.5.0"), true},
		{"v1.5.0 annotated, not a RayJob's", true, false, true, op("v1.5.0"), false},
		{"v1.4.2 RayJob cluster", false, true, true, op("v1.4.2"), false},
		{"v1.1.1 annotated RayJob cluster", true, true, true, op("v1.1.1"), false},
		{"unknown version, annotated", true, false, true, op(""), true},
		{"no operator, annotated", true, false, true, nil, true},
		{"not ready operator only, RayJob cluster", false, true, true, []ray.Operator{{Version: "v1.5.0"}}, false},
	} {
		why, got := ray.HeadRestartDisabled(cluster(c.annotated, c.fromJob, c.provisioned), c.ops)
		if got != c.want {
			t.Errorf("%s: disabled = %v (%s), want %v", c.name, got, why, c.want)
		}
	}
}

// The Ray container is the first one, as KubeRay reads it, wherever its status is listed.
func TestHeadRestartDisabledRayContainerExited(t *testing.T) {
	f := loadFixture(t, "head-restart-disabled-ray-exited")
	r := Diagnose(state.Trimmed(&f.snap), DefaultOptions())
	for _, fd := range r.Findings {
		if fd.Rule == RuleHeadRestartDisabled {
			if !strings.Contains(fd.Message, "the Ray container of head pod raycluster-a-head-abcde has exited under restartPolicy Never") {
				t.Fatalf("message %q", fd.Message)
			}
			return
		}
	}
	t.Fatal("no head-restart-disabled finding")
}

func TestReplaceDeadline(t *testing.T) {
	f := loadFixture(t, "head-evicted-new-operator-recent")
	at, ok := ReplaceDeadline(&f.snap, DefaultOptions())
	if want := fixtureNow.Add(-30 * time.Second).Add(2 * time.Minute); !ok || !at.Equal(want) {
		t.Fatalf("ReplaceDeadline = %s %v, want %s", at, ok, want)
	}
	late := loadFixture(t, "head-evicted-new-operator-late")
	if _, ok := ReplaceDeadline(&late.snap, DefaultOptions()); ok {
		t.Fatal("a grace that has ended is no deadline")
	}
}

// A head stuck Terminating on a restart-disabled cluster: heal would refuse, so doctor does not
// send the user there.
func TestHeadRestartDisabledStuckHeadHasNoHealAdvice(t *testing.T) {
	f := loadFixture(t, "head-restart-disabled-stuck")
	r := Diagnose(&f.snap, DefaultOptions())
	for _, fd := range r.Findings {
		if strings.Contains(fd.Remedy, "kubectl ray heal") {
			t.Errorf("%s: %s", fd.Rule, fd.Remedy)
		}
		if fd.Rule == RuleHeadTerminatingStuck && !strings.Contains(fd.Remedy, "no new head follows") {
			t.Errorf("remedy %q", fd.Remedy)
		}
	}
}
