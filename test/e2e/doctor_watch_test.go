package e2e

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDoctorWatch: doctor --watch, the real binary in the background, prints a head-evicted
// finding when the head is evicted (the kubelet's part played through the API: no kubelet runs
// in the sandbox), and clears it once heal has replaced the head; SIGINT ends it with exit 0.
func TestDoctorWatch(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("dw", nil)
	h.WaitClusterRunning("dw", 90*time.Second)
	w := h.startWatchdog("doctor-watch", h.SB.Kubeconfig(), "doctor", "--watch", "-n", h.NS, "-o", "json")
	h.WaitFor("doctor --watch to start", 30*time.Second, func() (bool, error) {
		return strings.Contains(w.Stderr(), "watching 1 RayCluster in namespace"), nil
	})

	evicted := h.healEvict("dw")
	waitChange(t, w, "NEW", "head-evicted", evicted.Name)
	if res := h.Run("heal", "dw", "--yes"); res.Code != 0 {
		t.Fatalf("heal: %s", res)
	}
	waitChange(t, w, "CLEARED", "head-evicted", evicted.Name)
	if code := w.Stop(syscall.SIGINT); code != 0 {
		t.Fatalf("doctor --watch exited %d on SIGINT, want 0; stderr: %s", code, w.Stderr())
	}
	for _, l := range w.Lines() {
		var e struct{ APIVersion, Kind, Type string }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Kind != "DoctorWatchEvent" || e.APIVersion == "" {
			t.Errorf("not a DoctorWatchEvent line: %q (%v)", l, err)
		}
	}
}

// waitChange waits for a -o json line of doctor --watch: a change of type to rule on pod.
func waitChange(t *testing.T, w *watchdog, typ, rule, pod string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, l := range w.Lines() {
			var e struct {
				Type    string
				Finding struct {
					Rule   string
					Object struct{ Name string }
				}
			}
			if json.Unmarshal([]byte(l), &e) == nil && e.Type == typ && e.Finding.Rule == rule && e.Finding.Object.Name == pod {
				return
			}
		}
		if !w.Running() || time.Now().After(deadline) {
			t.Fatalf("no %s %s of %s; doctor --watch printed:\n%s\nstderr: %s", typ, rule, pod, strings.Join(w.Lines(), "\n"), w.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
