package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func reportJSON(t *testing.T, s *Snapshot) string {
	t.Helper()
	b, err := json.MarshalIndent(Diagnose(s, DefaultOptions()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The loader trims what it lists (TrimPod, TrimCluster, TrimNode) to keep doctor's memory small
// at thousands of pods. Every fixture must give the same report, byte for byte, trimmed or not:
// a rule that starts reading a dropped field fails here, not silently in production.
func TestTrimChangesNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	snaps := map[string]Snapshot{"healthy": loadFixture(t, "healthy").snap, "secrets": secretFixture(t)}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		snaps[name] = loadFixture(t, name).snap
	}
	for name, full := range snaps {
		t.Run(name, func(t *testing.T) {
			slim := *Trimmed(&full)
			want, got := reportJSON(t, &full), reportJSON(t, &slim)
			if got != want {
				t.Fatalf("trimmed snapshot reports differently\n--- full:\n%s\n--- trimmed:\n%s", want, got)
			}
		})
	}
}

// What trimming drops is really gone, and the secrets in it are still redacted.
func TestTrimKeepsSecretsForTheRedactor(t *testing.T) {
	full := secretFixture(t)
	slim := *Trimmed(&full)
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
			if len(c.Env) > 1 || len(c.Env) == 1 && c.Env[0].Name != EnvGCSReconnectTimeout || len(c.EnvFrom) != 0 || len(c.Args) != 0 || len(c.Command) != 0 || len(c.VolumeMounts) > 1 {
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
