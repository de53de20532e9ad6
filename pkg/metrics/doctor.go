package metrics

import (
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// WriteDoctor writes doctor's report as gauges in Prometheus' text exposition format, for a
// node exporter's textfile collector or a push to a Pushgateway (docs/doctor.md shows both).
// A series per finding's cluster, rule and severity: bounded by the RayClusters in scope.
func WriteDoctor(w io.Writer, r *diagnose.Report) error {
	reg := prometheus.NewRegistry()
	findings := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_ray_doctor_findings",
		Help: "Findings of kubectl ray doctor by RayCluster, rule and severity (raycluster is empty for operator findings and RayJobs without a cluster)."},
		[]string{"namespace", "raycluster", "rule", "severity"})
	clusters := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_ray_doctor_clusters",
		Help: "RayClusters checked, by health: healthy, warning or error."}, []string{"health"})
	blind := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_ray_doctor_blind",
		Help: "1 for each resource doctor could not read, so the rules that need it did not run."}, []string{"resource"})
	jobs := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_ray_doctor_rayjobs",
		Help: "RayJobs checked, by health: healthy, warning or error."}, []string{"health"})
	last := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubectl_ray_doctor_last_run_timestamp_seconds",
		Help: "When doctor read the cluster, in seconds since the epoch."})
	reg.MustRegister(findings, clusters, jobs, blind, last)

	for _, h := range []diagnose.Health{diagnose.HealthHealthy, diagnose.HealthWarning, diagnose.HealthError} {
		clusters.WithLabelValues(string(h))
	}
	for _, c := range r.Clusters {
		clusters.WithLabelValues(string(c.Health)).Inc()
	}
	if len(r.RayJobs) > 0 {
		for _, h := range []diagnose.Health{diagnose.HealthHealthy, diagnose.HealthWarning, diagnose.HealthError} {
			jobs.WithLabelValues(string(h))
		}
	}
	for _, j := range r.RayJobs {
		jobs.WithLabelValues(string(j.Health)).Inc()
	}
	for _, f := range r.Findings {
		ns := f.Cluster.Namespace
		if f.RayJob != nil && ns == "" {
			ns = f.RayJob.Namespace // a RayJob without a cluster: its namespace, raycluster empty
		}
		if f.RayService != nil && ns == "" {
			ns = f.RayService.Namespace // the same for a RayService's own findings
		}
		findings.WithLabelValues(ns, f.Cluster.Name, f.Rule, string(f.Severity)).Inc()
	}
	for _, g := range r.Blind {
		blind.WithLabelValues(g.Resource).Set(1)
	}
	last.Set(float64(r.Now.Unix()))

	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
