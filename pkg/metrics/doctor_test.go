package metrics

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func TestWriteDoctor(t *testing.T) {
	r := &diagnose.Report{
		Now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Clusters: []diagnose.ClusterReport{
			{Namespace: "ml", Name: "a", Health: diagnose.HealthError},
			{Namespace: "ml", Name: "b", Health: diagnose.HealthHealthy},
		},
		Findings: []diagnose.Finding{
			{Rule: "operator-outdated", Severity: diagnose.SeverityWarning},
			{Rule: "head-evicted", Severity: diagnose.SeverityError, Cluster: state.Ref{Namespace: "ml", Name: "a"}},
			{Rule: "head-duplicate", Severity: diagnose.SeverityError, Cluster: state.Ref{Namespace: "ml", Name: "a"}},
			{Rule: "head-duplicate", Severity: diagnose.SeverityError, Cluster: state.Ref{Namespace: "ml", Name: "a"}},
		},
		Blind: []state.Gap{{Resource: "nodes", Reason: "forbidden"}},
	}
	var b bytes.Buffer
	if err := WriteDoctor(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `# HELP kubectl_ray_doctor_blind 1 for each resource doctor could not read, so the rules that need it did not run.
# TYPE kubectl_ray_doctor_blind gauge
kubectl_ray_doctor_blind{resource="nodes"} 1
# HELP kubectl_ray_doctor_clusters RayClusters checked, by health: healthy, warning or error.
# TYPE kubectl_ray_doctor_clusters gauge
kubectl_ray_doctor_clusters{health="error"} 1
kubectl_ray_doctor_clusters{health="healthy"} 1
kubectl_ray_doctor_clusters{health="warning"} 0
# HELP kubectl_ray_doctor_findings Findings of kubectl ray doctor by RayCluster, rule and severity (raycluster is empty for operator findings and RayJobs without a cluster).
# TYPE kubectl_ray_doctor_findings gauge
kubectl_ray_doctor_findings{namespace="",raycluster="",rule="operator-outdated",severity="warning"} 1
kubectl_ray_doctor_findings{namespace="ml",raycluster="a",rule="head-duplicate",severity="error"} 2
kubectl_ray_doctor_findings{namespace="ml",raycluster="a",rule="head-evicted",severity="error"} 1
# HELP kubectl_ray_doctor_last_run_timestamp_seconds When doctor read the cluster, in seconds since the epoch.
# TYPE kubectl_ray_doctor_last_run_timestamp_seconds gauge
kubectl_ray_doctor_last_run_timestamp_seconds 1.79604e+09
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// What a textfile collector or Pushgateway reads back: the exposition parser accepts it.
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatal(err)
	}
}
