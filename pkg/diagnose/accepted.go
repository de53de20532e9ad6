package diagnose

// Acceptance marks a finding a team accepted for a while in an accept file (kubectl ray doctor
// --accept). An accepted finding is still reported, but it decides nothing: it counts toward
// neither its cluster's health, the summary's severity counts, Worst, nor --fail-on.
type Acceptance struct {
	Reason string `json:"reason"`
	// Expires is the entry's date as written in the file.
	Expires string `json:"expires"`
	File    string `json:"file"`
	Line    int    `json:"line"`
}

// Accept marks the findings by accepts (by returns nil for the others) and recomputes the
// health of every cluster from its findings that are not accepted.
func (r *Report) Accept(by func(*Finding) *Acceptance) {
	byCluster := map[string][]Finding{}
	byJob := map[string][]Finding{}
	byService := map[string][]Finding{}
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
		c.Health = healthOf(byCluster[c.Namespace+"/"+c.Name])
	}
	for i := range r.RayJobs { // as jobView.report: its own findings and its cluster's
		j := &r.RayJobs[i]
		fs := byJob[j.Namespace+"/"+j.Name]
		if j.Cluster != "" {
			fs = append(fs, byCluster[j.Namespace+"/"+j.Cluster]...)
		}
		j.Health = healthOf(fs)
	}
	for i := range r.RayServices { // as serviceView.report: its own findings only
		sv := &r.RayServices[i]
		sv.Health = healthOf(byService[sv.Namespace+"/"+sv.Name])
	}
}

// healthOf is the worst severity among fs that are not accepted; info does not count.
func healthOf(fs []Finding) Health {
	h := HealthHealthy
	for _, f := range fs {
		switch {
		case f.Accepted != nil:
		case f.Severity == SeverityError:
			h = HealthError
		case f.Severity == SeverityWarning && h == HealthHealthy:
			h = HealthWarning
		}
	}
	return h
}
