package diagnose

// Add puts findings made outside the rules of this package (the manifest reader's, about a
// document's text) into r: each cluster's health counts them, and the findings keep the
// report's order.
func (r *Report) Add(fs ...Finding) {
	if len(fs) == 0 {
		return
	}
	r.Findings = append(r.Findings, fs...)
	by := map[string][]Finding{}
	for _, f := range r.Findings {
		by[key(f.Cluster.Namespace, f.Cluster.Name)] = append(by[key(f.Cluster.Namespace, f.Cluster.Name)], f)
	}
	for i := range r.Clusters {
		c := &r.Clusters[i]
		c.Health = HealthOf(by[key(c.Namespace, c.Name)])
	}
	sortFindings(r.Findings)
}
