package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

func TestWatchdogMetrics(t *testing.T) {
	h, _ := newTestHealth()
	m := NewWatchdog(h)
	a, b := types.NamespacedName{Namespace: "ml", Name: "a"}, types.NamespacedName{Namespace: "ml", Name: "b"}
	m.Broken(a, map[string]int{"head-evicted": 1})
	m.Broken(b, map[string]int{"head-evicted": 1, "head-duplicate": 1})
	m.Broken(a, map[string]int{"head-evicted": 1}) // said again: no double count
	m.Broken(b, nil)                               // b healed
	m.Outcome(repair.Outcome{Action: repair.Action{Rule: "head-evicted"}, Result: repair.Deleted})
	m.Outcome(repair.Outcome{Action: repair.Action{Rule: "head-evicted"}, Result: repair.Failed})
	m.Outcome(repair.Outcome{Action: repair.Action{Rule: "head-evicted"}, Result: repair.Deleted, EventProblem: "forbidden"})
	m.Refused(repair.Skip{Rule: "head-pending"})
	m.BackedOff(repair.Skip{Rule: "head-recreate-loop"})
	m.SeenToDelete("head-evicted", 12*time.Second)
	m.Replaced("head-evicted", 4*time.Second)
	m.WatchError("pods")
	h.APIChecked(nil)
	h.SetRole(RoleLeader)
	h.Synced()

	want := `
# HELP kubectl_ray_heal_heads_needing_heal Head pods the watchdog plans to delete now (waiting out --min-age included), by rule.
# TYPE kubectl_ray_heal_heads_needing_heal gauge
kubectl_ray_heal_heads_needing_heal{rule="head-duplicate"} 0
kubectl_ray_heal_heads_needing_heal{rule="head-evicted"} 1
# HELP kubectl_ray_heal_heals_total Heal decisions by doctor rule and result: deleted, dry-run, changed, gone, failed, refused, backed-off.
# TYPE kubectl_ray_heal_heals_total counter
kubectl_ray_heal_heals_total{result="backed-off",rule="head-recreate-loop"} 1
kubectl_ray_heal_heals_total{result="deleted",rule="head-evicted"} 2
kubectl_ray_heal_heals_total{result="failed",rule="head-evicted"} 1
kubectl_ray_heal_heals_total{result="refused",rule="head-pending"} 1
# HELP kubectl_ray_heal_api_errors_total API requests of the watchdog that failed, by operation (delete, event, ping).
# TYPE kubectl_ray_heal_api_errors_total counter
kubectl_ray_heal_api_errors_total{operation="delete"} 1
kubectl_ray_heal_api_errors_total{operation="event"} 1
# HELP kubectl_ray_heal_watch_errors_total List or watch errors the informers retried after, by resource.
# TYPE kubectl_ray_heal_watch_errors_total counter
kubectl_ray_heal_watch_errors_total{resource="pods"} 1
# HELP kubectl_ray_heal_leader 1 while this replica acts (leader, or running without --leader-elect), 0 while it stands by.
# TYPE kubectl_ray_heal_leader gauge
kubectl_ray_heal_leader 1
# HELP kubectl_ray_heal_ready 1 while /readyz answers ok.
# TYPE kubectl_ray_heal_ready gauge
kubectl_ray_heal_ready 1
`
	names := []string{"kubectl_ray_heal_heads_needing_heal", "kubectl_ray_heal_heals_total", "kubectl_ray_heal_api_errors_total",
		"kubectl_ray_heal_watch_errors_total", "kubectl_ray_heal_leader", "kubectl_ray_heal_ready"}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.seenToDelete); n != 1 {
		t.Fatalf("seen_to_delete series = %d, want 1", n)
	}
	if got := testutil.ToFloat64(m.leader); got != 1 {
		t.Fatalf("leader = %v", got)
	}
	h.SetRole(RoleStandby)
	if got := testutil.ToFloat64(m.leader); got != 0 {
		t.Fatalf("leader after standing by = %v", got)
	}
	// The standard collectors are there.
	seen := gatheredNames(t, m)
	for _, n := range []string{"go_goroutines", "process_resident_memory_bytes", "kubectl_ray_heal_delete_to_ready_seconds"} {
		if !seen[n] {
			t.Errorf("metric %s missing", n)
		}
	}
}

func keyFor(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "ns", Name: name}
}

func skipFor(rule string) repair.Skip { return repair.Skip{Rule: rule} }

// gatheredNames are the names of the metric families m's registry gathers.
func gatheredNames(t *testing.T, m *Watchdog) map[string]bool {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}
