package doctorprint

import (
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// The table's group titles and the small words they are made of.

// jobGroup prefixes the table group of a RayJob's findings ("namespace/name" is a cluster's).
const jobGroup = "rayjob "

// serviceGroup prefixes the table group of the findings about a RayService itself.
const serviceGroup = "rayservice "

// cronGroup prefixes the table group of a RayCronJob's findings (the report lists no RayCronJobs).
const cronGroup = "raycronjob "

// cronTitle heads them: "RayCronJob ml/nightly: error", the worst of its findings.
func cronTitle(p cmdutil.Painter, g string, fs []diagnose.Finding) string {
	return p.Bold("RayCronJob "+strings.TrimPrefix(g, cronGroup)) + ": " + p.Severity(string(diagnose.HealthOf(fs)))
}

// serviceTitle heads them: "RayService serve/web: error".
func serviceTitle(p cmdutil.Painter, sv *diagnose.ServiceReport) string {
	return p.Bold("RayService "+sv.Namespace+"/"+sv.Name) + ": " + p.Severity(string(sv.Health))
}

// jobTitle heads a RayJob's findings: "RayJob ml/etl (RayCluster etl-x7k2p): error".
func jobTitle(p cmdutil.Painter, j *diagnose.JobReport, wide bool) string {
	title := p.Bold("RayJob " + j.Namespace + "/" + j.Name)
	if j.Cluster != "" {
		title += " (RayCluster " + j.Cluster + ")"
	}
	title += ": " + p.Severity(string(j.Health))
	if wide {
		title += "  (jobDeploymentStatus " + orDash(j.JobDeploymentStatus) + "; jobStatus " + orDash(j.JobStatus) + ")"
	}
	return title
}

// jobsSuffix counts the RayJobs checked, when there were any: "; 2 RayJobs: 1 healthy, 1 with errors".
func jobsSuffix(p cmdutil.Painter, r *diagnose.Report) string {
	if len(r.RayJobs) == 0 {
		return ""
	}
	var healthy, errs, warns int
	for _, j := range r.RayJobs {
		switch j.Health {
		case diagnose.HealthHealthy:
			healthy++
		case diagnose.HealthError:
			errs++
		case diagnose.HealthWarning:
			warns++
		}
	}
	return fmt.Sprintf("; %s: %s, %s, %s", Plural(len(r.RayJobs), "RayJob"), paintIf(p.Green, healthy, fmt.Sprintf("%d healthy", healthy)),
		paintIf(p.Red, errs, fmt.Sprintf("%d with errors", errs)), paintIf(p.Yellow, warns, fmt.Sprintf("%d with warnings", warns)))
}

// printWrapped prints s as one line, or wrapped to width when width is set.
func printWrapped(w io.Writer, width int, s string) error {
	for _, line := range cmdutil.Wrap(s, width) {
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

func groupTitle(p cmdutil.Painter, c *diagnose.ClusterReport, r *diagnose.Report, wide bool) string {
	if c == nil {
		title := "KubeRay operator"
		if wide {
			title += " (" + operatorVersions(r) + ")"
		}
		return p.Bold(title)
	}
	title := p.Bold("RayCluster "+c.Namespace+"/"+c.Name) + ownerOf(c) + ": " + p.Severity(string(c.Health))
	if wide {
		head := "no head"
		if len(c.Heads) > 0 {
			head = "head " + strings.Join(c.Heads, ",")
			if len(c.Nodes) > 0 {
				head += " on " + strings.Join(c.Nodes, ",")
			}
		}
		title += fmt.Sprintf("  (%s%s; age %s; operator %s)", head, groupCounts(c.Groups), age(r.Now.Sub(c.Created)), operatorVersions(r))
	}
	return title
}

// groupCounts is "; workers small-group 2/3 ready (3 running)": each worker group's Ready pods
// against its desired count, and its Running ones when they differ.
func groupCounts(gs []diagnose.GroupReport) string {
	if len(gs) == 0 {
		return ""
	}
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		p := fmt.Sprintf("%s %d/%d ready", g.Name, g.Ready, g.Desired)
		if g.Running != g.Ready {
			p += fmt.Sprintf(" (%d running)", g.Running)
		}
		parts = append(parts, p)
	}
	return "; workers " + strings.Join(parts, ", ")
}

func ownerOf(c *diagnose.ClusterReport) string {
	if c.Owner == nil {
		return ""
	}
	return " (" + c.Owner.Kind + " " + c.Owner.Name + ")"
}

// operatorVersions names the operators found, for -o wide.
func operatorVersions(r *diagnose.Report) string {
	for _, g := range r.Blind {
		if g.Resource == "deployments" {
			return "not visible"
		}
	}
	if len(r.Operators) == 0 {
		return "none"
	}
	var vs []string
	for _, op := range r.Operators {
		v := op.Version
		if v == "" {
			v = "unknown version"
		}
		vs = append(vs, v)
	}
	return strings.Join(vs, ",")
}

func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return duration.HumanDuration(d)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Plural is "1 RayCluster" or "3 RayClusters".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func paintIf(paint func(string) string, n int, s string) string {
	if n == 0 {
		return s
	}
	return paint(s)
}
