// Package alerts checks the alerting rules shipped in docs/deploy/monitoring.yaml with
// Prometheus' own rule parser (the one promtool check rules uses). It is a module of its own so
// that Prometheus' dependencies never reach the kubectl-ray binary; `make test` runs it.
package alerts

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

func TestShippedAlertsParse(t *testing.T) {
	b, err := os.ReadFile("../../docs/deploy/monitoring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var obj struct {
			Kind string          `json:"kind"`
			Spec json.RawMessage `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("docs/deploy/monitoring.yaml: %v", err)
		}
		if obj.Kind != "PrometheusRule" {
			continue
		}
		found++
		// A PrometheusRule's spec is a rule file's content: {groups: [...]}.
		rules, err := yaml.JSONToYAML(obj.Spec)
		if err != nil {
			t.Fatal(err)
		}
		groups, errs := rulefmt.Parse(rules, false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
		for _, err := range errs {
			t.Errorf("docs/deploy/monitoring.yaml: %v", err)
		}
		if groups == nil {
			continue
		}
		var alerts []string
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				alerts = append(alerts, r.Alert)
				if r.For == 0 && !strings.Contains(r.Expr, "increase(") {
					t.Errorf("alert %s fires on one scrape: give it a for:", r.Alert)
				}
			}
		}
		want := "RayHeadBrokenTooLong RayHeadHealsFailing RayHealWatchdogNoLeader RayHealWatchdogNotReady"
		if got := strings.Join(alerts, " "); got != want {
			t.Errorf("alerts %q, want %q", got, want)
		}
	}
	if found != 1 {
		t.Fatalf("want one PrometheusRule in docs/deploy/monitoring.yaml, found %d", found)
	}
}
