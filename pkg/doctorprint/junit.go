package doctorprint

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/junit"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// writeJUnit writes JUnit as CI systems read it: one testsuite per RayCluster, one per RayJob
// ("RayJob ns/name"), one per RayService for the rules about it ("RayService ns/name") and one
// for the operator, one testcase per rule. A rule whose findings reach --fail-on fails; findings below
// it are written to the testcase's system-out; a rule that could not run (blind, or not a
// RayService cluster) is skipped with the reason.
// writeJUnit writes r as JUnit. files is doctor -f's: each document's cluster lists the rules
// that ran on files (scopes spec and manifest), and the operator is a suite only when a cluster
// was asked.
func (rep Report) writeJUnit(w io.Writer) error {
	r, threshold, files := rep.Report, rep.Threshold, rep.Files
	doc := junit.Report{Name: "kubectl ray doctor", Counts: true}
	byCluster := map[string][]diagnose.Finding{}
	byJob := map[string][]diagnose.Finding{}
	byService := map[string][]diagnose.Finding{}
	byCronJob := map[string][]diagnose.Finding{}
	var cronJobs []string
	for _, f := range r.Findings {
		if f.Object.Kind == ray.KindRayCronJob {
			k := f.Object.Namespace + "/" + f.Object.Name
			if byCronJob[k] == nil {
				cronJobs = append(cronJobs, k)
			}
			byCronJob[k] = append(byCronJob[k], f)
			continue
		}
		if f.RayJob != nil {
			k := f.RayJob.Namespace + "/" + f.RayJob.Name
			byJob[k] = append(byJob[k], f)
			continue
		}
		if f.RayService != nil {
			k := f.RayService.Namespace + "/" + f.RayService.Name
			byService[k] = append(byService[k], f)
			continue
		}
		k := f.Cluster.Namespace + "/" + f.Cluster.Name
		byCluster[k] = append(byCluster[k], f)
	}
	blind := map[string]string{}
	for _, g := range r.Blind {
		blind[g.Resource] = g.Reason
	}
	ts := r.Now.UTC().Format("2006-01-02T15:04:05Z")
	suite := func(name string, scopes []string, fs []diagnose.Finding, rayService bool, rayView *diagnose.RayReport) {
		s := junit.Suite{Name: name, Timestamp: ts}
		for _, rule := range diagnose.Catalog {
			if !slices.Contains(scopes, rule.Scope) || diagnose.FilesOnly(rule.ID) && files == nil {
				continue // a rule of doctor -f only: live, the operator has judged the spec
			}
			tc := junit.Case{Name: rule.ID, Classname: name}
			var failing, other, accepted []string
			for _, f := range fs {
				if f.Rule != rule.ID {
					continue
				}
				line := fmt.Sprintf("%s %s/%s: %s\nfix: %s", f.Severity, strings.ToLower(f.Object.Kind), f.Object.Name, f.Message, f.Remedy)
				if f.Accepted != nil {
					accepted = append(accepted, accept.Note(f.Accepted))
					other = append(other, line+"\n"+accept.Note(f.Accepted))
				} else if threshold != "" && f.Severity.Rank() >= threshold.Rank() {
					failing = append(failing, line)
				} else {
					other = append(other, line)
				}
			}
			switch {
			case len(failing) > 0:
				tc.Failure = &junit.Failure{Type: string(rule.Severity), Message: strings.SplitN(failing[0], "\n", 2)[0], Text: strings.Join(failing, "\n\n")}
			case len(accepted) > 0:
				// An accepted finding never fails the job; skipped is how CI shows "known, not checked".
				tc.Skipped = &junit.Skipped{Message: strings.Join(accepted, "; ")}
			case rule.Needs != "" && blind[rule.Needs] != "":
				tc.Skipped = &junit.Skipped{Message: "could not see " + rule.Needs + ": " + blind[rule.Needs]}
			case (rule.Scope == "rayservice" || diagnose.RayServiceSpecRule(rule.ID)) && !rayService:
				tc.Skipped = &junit.Skipped{Message: "applies to clusters of a RayService"}
			case rule.Scope == "ray" && rule.ID != diagnose.RuleRayDashboardUnreachable && rule.ID != diagnose.RuleRayDashboardAuth && !rayView.Read:
				// The two rules that say why Ray's view was not read are checked; the others not.
				tc.Skipped = &junit.Skipped{Message: "Ray's view was not read: " + rayView.Unreachable}
			}
			tc.SystemOut = strings.Join(other, "\n\n")
			s.Cases = append(s.Cases, tc)
		}
		doc.Suites = append(doc.Suites, s)
	}
	if files == nil || files.Online {
		suite("kuberay-operator", []string{"operator"}, byCluster["/"], false, nil)
	}
	for _, c := range r.Clusters {
		k := c.Namespace + "/" + c.Name
		scopes := []string{"spec", "cluster", "rayservice"}
		if files != nil {
			scopes = []string{"spec", "manifest"}
			if files.Online {
				scopes = append(scopes, "admission")
			}
		}
		if c.Ray != nil {
			// Ray's rules are testcases only where Ray was asked: a pass means Ray was read.
			scopes = append(scopes, "ray")
		}
		suite(k, scopes, byCluster[k], c.Owner != nil && c.Owner.Kind == "RayService", c.Ray)
	}
	for _, j := range r.RayJobs {
		k := j.Namespace + "/" + j.Name
		suite("RayJob "+k, []string{"rayjob"}, byJob[k], false, nil)
	}
	for _, sv := range r.RayServices {
		k := sv.Namespace + "/" + sv.Name
		suite("RayService "+k, []string{"rayservice-object"}, byService[k], false, nil)
	}
	// A RayCronJob is a suite when a rule found something of it: the report lists no RayCronJobs.
	for _, k := range cronJobs {
		suite("RayCronJob "+k, []string{"raycronjob"}, byCronJob[k], false, nil)
	}
	return junit.Write(w, doc)
}
