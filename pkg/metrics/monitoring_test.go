package metrics

import (
	"os"
	"regexp"
	"testing"
)

// Every kubectl_ray_heal_* series the shipped alerts query is one the watchdog exports: a
// renamed metric must not leave an alert that can never fire. (Prometheus' own rule parser checks
// the expressions themselves in hack/alerts.)
func TestAlertsQueryExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../docs/deploy/monitoring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := NewWatchdog(NewHealth(0, 0))
	m.Broken(keyFor("x"), map[string]int{"r": 1})
	m.Refused(skipFor("r"))
	m.SeenToDelete("r", 0)
	m.Replaced("r", 0)
	m.WatchError("pods")
	m.PingError()
	have := gatheredNames(t, m)
	used := regexp.MustCompile(`kubectl_ray_heal_[a-z_]+`).FindAllString(string(b), -1)
	if len(used) == 0 {
		t.Fatal("no kubectl_ray_heal_ metric in docs/deploy/monitoring.yaml")
	}
	for _, name := range used {
		if !have[name] {
			t.Errorf("docs/deploy/monitoring.yaml queries %s, which the watchdog does not export", name)
		}
	}
}
