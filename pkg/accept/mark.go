package accept

import "github.com/kubectl-ray/kubectl-ray/pkg/diagnose"

// mark marks the findings of r by accepts (by returns nil for the others) and recomputes the
// health of every cluster, RayJob and RayService from its findings that are not accepted.
func mark(r *diagnose.Report, by func(*diagnose.Finding) *diagnose.Acceptance) {
	byCluster := map[string][]diagnose.Finding{}
	byJob := map[string][]diagnose.Finding{}
	byService := map[string][]diagnose.Finding{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if a := by(f); a != nil {
			f.Accepted = a
		}
		if f.RayJob != nil {
			k := f.RayJob.Namespace + "/" + f.RayJob.Name
			byJob[k] = append(byJob[k], *f)
			continue
		}
		if f.RayService != nil {
			k := f.RayService.Namespace + "/" + f.RayService.Name
			byService[k] = append(byService[k], *f)
			continue
		}
		k := f.Cluster.Namespace + "/" + f.Cluster.Name
		byCluster[k] = append(byCluster[k], *f)
	}
	for i := range r.Clusters {
		c := &r.Clusters[i]
		c.Health = diagnose.HealthOf(byCluster[c.Namespace+"/"+c.Name])
	}
	for i := range r.RayJobs { // as jobView.report: its own findings and its cluster's
		j := &r.RayJobs[i]
		fs := byJob[j.Namespace+"/"+j.Name]
		if j.Cluster != "" {
			fs = append(fs, byCluster[j.Namespace+"/"+j.Cluster]...)
		}
		j.Health = diagnose.HealthOf(fs)
	}
	for i := range r.RayServices { // as serviceView.report: its own findings only
		sv := &r.RayServices[i]
		sv.Health = diagnose.HealthOf(byService[sv.Namespace+"/"+sv.Name])
	}
}
