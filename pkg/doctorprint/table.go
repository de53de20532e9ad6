package doctorprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// printTable writes findings grouped by cluster (cluster-independent ones first, under "KubeRay
// operator"), each finding followed by its remedy, then one summary line. Healthy clusters are
// only counted: with a thousand clusters, listing them would bury the broken ones. On a
// terminal, every line fits its width (-o wide prints everything whole).
func (o Report) printTable(w io.Writer, wide bool) error {
	r := o.Report
	p := cmdutil.NewPainter(o.Color)
	width := 0
	if !wide {
		width = o.Width
	}
	byCluster := map[string]*diagnose.ClusterReport{}
	for i := range r.Clusters {
		c := &r.Clusters[i]
		byCluster[c.Namespace+"/"+c.Name] = c
	}
	byJob := map[string]*diagnose.JobReport{}
	for i := range r.RayJobs {
		j := &r.RayJobs[i]
		byJob[jobGroup+j.Namespace+"/"+j.Name] = j
	}
	byService := map[string]*diagnose.ServiceReport{}
	for i := range r.RayServices {
		sv := &r.RayServices[i]
		byService[serviceGroup+sv.Namespace+"/"+sv.Name] = sv
	}
	var groups []string
	rows := map[string][]diagnose.Finding{}
	for _, f := range r.Findings {
		if f.Accepted != nil {
			continue // printed apart, by printAccepted
		}
		k := f.Cluster.Namespace + "/" + f.Cluster.Name
		switch {
		case f.RayJob != nil:
			k = jobGroup + f.RayJob.Namespace + "/" + f.RayJob.Name
		case f.RayService != nil:
			k = serviceGroup + f.RayService.Namespace + "/" + f.RayService.Name
		case f.Object.Kind == ray.KindRayCronJob:
			k = cronGroup + f.Object.Namespace + "/" + f.Object.Name
		}
		if _, seen := rows[k]; !seen {
			groups = append(groups, k)
		}
		rows[k] = append(rows[k], f)
	}
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if j := byJob[g]; j != nil {
			printWrapped(w, width, jobTitle(p, j, wide))
		} else if sv := byService[g]; sv != nil {
			printWrapped(w, width, serviceTitle(p, sv))
		} else if strings.HasPrefix(g, cronGroup) {
			printWrapped(w, width, cronTitle(p, g, rows[g]))
		} else if title, ok := o.Files.documentTitle(p, byCluster[g]); ok {
			printWrapped(w, width, title)
		} else {
			printWrapped(w, width, groupTitle(p, byCluster[g], r, wide))
		}
		header := []string{"SEVERITY", "RULE", "OBJECT", "MESSAGE"}
		if wide {
			header = []string{"SEVERITY", "RULE", "OBJECT", "NODE", "AGE", "MESSAGE"}
		}
		t := cmdutil.NewTable(header...)
		t.Fit(width)
		for _, f := range rows[g] {
			obj := strings.ToLower(f.Object.Kind) + "/" + f.Object.Name
			fix := p.Faint("fix: " + f.Remedy)
			if wide {
				t.Append(p.Severity(string(f.Severity)), f.Rule, obj, orDash(f.Evidence["node"]), orDash(f.Evidence["age"]), f.Message)
				if at := where(f); at != "" {
					t.Append("", "", "", "", "", p.Faint(at))
				}
				t.Append("", "", "", "", "", fix)
			} else {
				t.Append(p.Severity(string(f.Severity)), f.Rule, obj, f.Message)
				if at := where(f); at != "" {
					t.Append("", "", "", p.Faint(at))
				}
				t.Append("", "", "", fix)
			}
		}
		if err := t.Render(w, "  "); err != nil {
			return err
		}
	}
	if len(groups) > 0 && r.Summary().Accepted > 0 {
		fmt.Fprintln(w)
	}
	if printed, err := printAccepted(w, p, r, wide); err != nil {
		return err
	} else if printed {
		groups = append(groups, "accepted")
	}
	if len(r.Clusters) == 0 && len(r.RayJobs) == 0 {
		if len(groups) > 0 {
			fmt.Fprintln(w)
		}
		where := "in any namespace"
		if o.Namespace != "" {
			where = fmt.Sprintf("in namespace %q", o.Namespace)
		}
		if o.Selector != "" {
			where += " matching -l " + o.Selector
		}
		return printWrapped(w, width, fmt.Sprintf("No RayClusters found %s.", where))
	}
	if len(groups) > 0 {
		fmt.Fprintln(w)
	}
	if o.Files != nil {
		return o.Files.printSummary(w, p, width, r)
	}
	s := r.Summary()
	return printWrapped(w, width, fmt.Sprintf("%s checked: %s, %s, %s%s%s.", Plural(s.Clusters, "RayCluster"),
		paintIf(p.Green, s.Healthy, fmt.Sprintf("%d healthy", s.Healthy)),
		paintIf(p.Red, s.WithErrors, fmt.Sprintf("%d with errors", s.WithErrors)),
		paintIf(p.Yellow, s.WithWarnings, fmt.Sprintf("%d with warnings", s.WithWarnings)), jobsSuffix(p, r), acceptedSuffix(s)))
}
