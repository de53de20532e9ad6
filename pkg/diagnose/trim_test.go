package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func reportJSON(t *testing.T, s *state.Snapshot) string {
	t.Helper()
	b, err := json.MarshalIndent(Diagnose(s, DefaultOptions()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The loader trims what it lists (TrimPod, TrimCluster, TrimNode) to keep doctor's memory small
// at thousands of pods. Every fixture must give the same report, byte for byte, trimmed or not:
// a rule that starts reading a dropped field fails here, not silently in production. So must
// the pods the watchdog caches encoded.
func TestTrimChangesNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	snaps := map[string]state.Snapshot{"healthy": loadFixture(t, "healthy").snap, "secrets": secretFixture(t)}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		snaps[name] = loadFixture(t, name).snap
	}
	for name, full := range snaps {
		t.Run(name, func(t *testing.T) {
			slim := *state.Trimmed(&full)
			want, got := reportJSON(t, &full), reportJSON(t, &slim)
			if got != want {
				t.Fatalf("trimmed snapshot reports differently\n--- full:\n%s\n--- trimmed:\n%s", want, got)
			}
			// The long-running modes trim pods unshared and cache them encoded (pkg/kube's
			// packedPod): the pods decoded from that must report the same too.
			packed := slim
			packed.Pods = nil
			for _, p := range full.Pods {
				q := p.DeepCopy()
				state.TrimPodToPack(q, packed.Secrets)
				wire, err := q.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				var back corev1.Pod
				if err := back.Unmarshal(wire); err != nil {
					t.Fatal(err)
				}
				packed.Pods = append(packed.Pods, back)
			}
			if got := reportJSON(t, &packed); got != want {
				t.Fatalf("packed pods report differently\n--- full:\n%s\n--- packed:\n%s", want, got)
			}
		})
	}
}

// What trimming drops is really gone, and the secrets in it are still redacted.
func TestTrimKeepsSecretsForTheRedactor(t *testing.T) {
	full := secretFixture(t)
	slim := *state.Trimmed(&full)
	for _, p := range slim.Pods {
		// Of the containers only the first one's name stays (the Ray container, for rules).
		if len(p.Spec.Containers) > 1 || len(p.Spec.Containers) == 1 && (p.Spec.Containers[0].Image != "" ||
			len(p.Spec.Containers[0].Env) != 0 || len(p.Spec.Containers[0].Args) != 0 || len(p.Spec.Containers[0].Command) != 0) ||
			len(p.Annotations) != 0 {
			t.Fatalf("pod %s keeps its containers or annotations after TrimPod", p.Name)
		}
	}
	for _, rc := range slim.Clusters {
		// Of a group's template only the containers' names, images and resources stay.
		for _, c := range rc.Spec.HeadGroupSpec.Template.Spec.Containers {
			if len(c.Env) > 1 || len(c.Env) == 1 && c.Env[0].Name != ray.EnvGCSReconnectTimeout || len(c.EnvFrom) != 0 || len(c.Args) != 0 || len(c.Command) != 0 || len(c.VolumeMounts) > 1 {
				t.Fatalf("cluster %s keeps its head template after TrimCluster", rc.Name)
			}
		}
		for _, v := range rc.Spec.HeadGroupSpec.Template.Spec.Volumes {
			if v.VolumeSource != (corev1.VolumeSource{}) && (v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil) {
				t.Fatalf("cluster %s keeps its head volume %s's source after TrimCluster", rc.Name, v.Name)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := reportJSON(t, &slim)
	// Only in specs that were dropped; the other one is a URI password in a kubelet message.
	if _, ok := slim.Secrets["Sup3rS3cretRedis"]; !ok {
		t.Error("trimming lost the Redis password of the specs it dropped")
	}
	for _, secret := range []string{"Sup3rS3cretRedis", "An0therPw"} {
		if !strings.Contains(string(raw), secret) {
			t.Fatalf("testdata/secrets.yaml no longer holds %q: this test checks nothing", secret)
		}
		if strings.Contains(out, secret) {
			t.Errorf("report of the trimmed snapshot contains %q:\n%s", secret, out)
		}
	}
}

// A terminal pod with no container finish time is dated by its latest condition change
// (failedAt): trimming drops the conditions no rule reads, but never that change.
func TestReadConditionsKeepLatestChange(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 12, 6, 0, 0, s, 0, time.UTC)) }
	pod := func(cs ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Conditions: cs}}
	}
	cases := map[string]struct {
		in   *corev1.Pod
		kept []corev1.PodConditionType
	}{
		"a kubelet's five, Ready last": {pod(
			corev1.PodCondition{Type: "PodReadyToStartContainers", LastTransitionTime: at(1)},
			corev1.PodCondition{Type: corev1.PodInitialized, LastTransitionTime: at(1)},
			corev1.PodCondition{Type: corev1.PodReady, LastTransitionTime: at(5)},
			corev1.PodCondition{Type: corev1.ContainersReady, LastTransitionTime: at(5)},
			corev1.PodCondition{Type: corev1.PodScheduled, LastTransitionTime: at(0)},
		), []corev1.PodConditionType{corev1.PodReady, corev1.PodScheduled}},
		"an unread one changed last": {pod(
			corev1.PodCondition{Type: corev1.PodReady, LastTransitionTime: at(5)},
			corev1.PodCondition{Type: corev1.ContainersReady, LastTransitionTime: at(9)},
		), []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady}},
		"only unread ones": {pod(
			corev1.PodCondition{Type: corev1.PodInitialized, LastTransitionTime: at(3)},
			corev1.PodCondition{Type: corev1.ContainersReady, LastTransitionTime: at(2)},
		), []corev1.PodConditionType{corev1.PodInitialized}},
		"none": {pod(), nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			trimmed := c.in.DeepCopy()
			state.TrimPod(trimmed, redact.Set{})
			var got []corev1.PodConditionType
			for _, pc := range trimmed.Status.Conditions {
				got = append(got, pc.Type)
			}
			if !slices.Equal(got, c.kept) {
				t.Errorf("kept %v, want %v", got, c.kept)
			}
			if a, b := failedAt(c.in), failedAt(trimmed); !a.Equal(b) {
				t.Errorf("failedAt %s trimmed, %s whole", b, a)
			}
		})
	}
}
