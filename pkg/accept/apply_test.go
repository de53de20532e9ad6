package accept

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

var day = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)

func entry(rules, cluster, operator, expires string, line int) Entry {
	e := Entry{Rules: strings.Split(rules, ","), Cluster: cluster, Operator: operator, Reason: "because " + rules,
		ExpiresText: expires, Pos: Pos{"a.yaml", line}}
	e.Expires, _ = parseExpires(expires)
	return e
}

func clusterFinding(rule string, sev diagnose.Severity, ns, name string) diagnose.Finding {
	return diagnose.Finding{Rule: rule, Severity: sev, Cluster: state.Ref{Kind: "RayCluster", Namespace: ns, Name: name},
		Object: state.Ref{Kind: "Pod", Namespace: ns, Name: name + "-head"}}
}

func report(now time.Time) *diagnose.Report {
	return &diagnose.Report{
		Now: now,
		Clusters: []diagnose.ClusterReport{
			{Namespace: "ml", Name: "train-a", Health: diagnose.HealthError},
			{Namespace: "ml", Name: "serve", Health: diagnose.HealthError},
		},
		Findings: []diagnose.Finding{
			{Rule: "operator-outdated", Severity: diagnose.SeverityWarning, Object: state.Ref{Kind: "Deployment", Namespace: "kuberay-system", Name: "kuberay-operator"}},
			clusterFinding("head-crashloop", diagnose.SeverityError, "ml", "serve"),
			clusterFinding("head-crashloop", diagnose.SeverityError, "ml", "train-a"),
			clusterFinding("status-stale", diagnose.SeverityWarning, "ml", "train-a"),
		},
	}
}

func accepted(r *diagnose.Report) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Accepted != nil {
			out = append(out, f.Rule+" "+f.Cluster.Name+" "+f.Accepted.File+":"+itoa(f.Accepted.Line))
		}
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

func refs(rs []EntryRef) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Line)
	}
	return out
}

func TestApplyMatching(t *testing.T) {
	s := &Set{Files: []string{"a.yaml"}, Entries: []Entry{
		entry("head-crashloop", "ml/train-*", "", "2025-07-01", 1),
		entry("operator-outdated", "", "*/kuberay-*", "2025-07-01", 2),
		entry("head-crashloop,status-stale", "*/train-a", "", "2025-07-01", 3), // status-stale only here; crashloop already taken by line 1
		entry("head-pending", "ml/*", "", "2025-07-01", 4),                     // nothing pending: stale
		entry("head-crashloop", "dev/*", "", "2025-07-01", 5),                  // another namespace: not judged in -n ml
	}}
	r := report(day)
	st := Apply(r, s, Scope{Namespace: "ml"})
	want := []string{"operator-outdated  a.yaml:2", "head-crashloop train-a a.yaml:1", "status-stale train-a a.yaml:3"}
	if got := accepted(r); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("accepted\n  got  %q\n  want %q", got, want)
	}
	if got := fmtInts(refs(st.Stale)); got != "4" || len(st.Expired) != 0 {
		t.Errorf("stale %v expired %v, want stale 4 only", got, refs(st.Expired))
	}
	// Health and the summary count only what is not accepted; Worst too, so --fail-on ignores it.
	if r.Clusters[0].Health != diagnose.HealthHealthy || r.Clusters[1].Health != diagnose.HealthError {
		t.Errorf("health %+v", r.Clusters)
	}
	sum := r.Summary()
	if sum.Errors != 1 || sum.Warnings != 0 || sum.Accepted != 3 || sum.Healthy != 1 || sum.WithErrors != 1 {
		t.Errorf("summary %+v", sum)
	}
	// With -A the dev entry is judged too, and is stale.
	if st := Apply(report(day), s, Scope{}); fmtInts(refs(st.Stale)) != "4 5" {
		t.Errorf("-A stale %v", refs(st.Stale))
	}
}

// rayJob: entries accept the rayjob-* findings of the RayJobs they name, with a cluster or
// without one; cluster: entries never accept them, and rayJob: entries nothing else.
func TestApplyRayJobs(t *testing.T) {
	job := func(rule, name, cluster string) diagnose.Finding {
		f := diagnose.Finding{Rule: rule, Severity: diagnose.SeverityError, Object: state.Ref{Kind: "RayJob", Namespace: "ml", Name: name}}
		f.RayJob = &f.Object
		if cluster != "" {
			f.Cluster = state.Ref{Kind: "RayCluster", Namespace: "ml", Name: cluster}
		}
		return f
	}
	r := &diagnose.Report{Now: day,
		Clusters: []diagnose.ClusterReport{{Namespace: "ml", Name: "nightly-x", Health: diagnose.HealthError}},
		RayJobs: []diagnose.JobReport{{Namespace: "ml", Name: "etl", Health: diagnose.HealthError},
			{Namespace: "ml", Name: "nightly", Cluster: "nightly-x", Health: diagnose.HealthError}},
		Findings: []diagnose.Finding{job("rayjob-failed", "etl", ""), job("rayjob-failed", "nightly", "nightly-x"),
			clusterFinding("head-crashloop", diagnose.SeverityError, "ml", "nightly-x")}}
	rj := entry("rayjob-failed", "", "", "2025-07-01", 1)
	rj.RayJob = "ml/etl"
	s := &Set{Files: []string{"a.yaml"}, Entries: []Entry{rj, entry("rayjob-failed", "ml/*", "", "2025-07-01", 2)}}
	st := Apply(r, s, Scope{Namespace: "ml"})
	if got := accepted(r); strings.Join(got, "|") != "rayjob-failed  a.yaml:1" {
		t.Errorf("accepted %q, want only etl's rayjob-failed by the rayJob: entry", got)
	}
	if r.RayJobs[0].Health != diagnose.HealthHealthy || r.RayJobs[1].Health != diagnose.HealthError || r.Clusters[0].Health != diagnose.HealthError {
		t.Errorf("health: rayJobs %+v clusters %+v", r.RayJobs, r.Clusters)
	}
	if fmtInts(refs(st.Stale)) != "2" {
		t.Errorf("stale %v, want the cluster: entry (it matches no RayJob finding)", refs(st.Stale))
	}
}

func fmtInts(is []int) string {
	var parts []string
	for _, i := range is {
		parts = append(parts, itoa(i))
	}
	return strings.Join(parts, " ")
}

// Expiry is judged at the report's time: an entry accepts until the first instant of its date.
func TestApplyExpiry(t *testing.T) {
	s := &Set{Entries: []Entry{entry("head-crashloop", "ml/*", "", "2025-07-01", 1)}}
	for _, tc := range []struct {
		now      time.Time
		accepted bool
	}{
		{time.Date(2025, 6, 30, 23, 59, 59, 0, time.UTC), true},
		{time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		r := report(tc.now)
		st := Apply(r, s, Scope{Namespace: "ml"})
		n := len(accepted(r))
		switch {
		case tc.accepted && (n != 2 || len(st.Expired) != 0):
			t.Errorf("%s: want both crashloops accepted, got %v, expired %v", tc.now, accepted(r), refs(st.Expired))
		case !tc.accepted && (n != 0 || len(st.Expired) != 1 || st.Expired[0].Line != 1 || len(st.Stale) != 0):
			t.Errorf("%s: want nothing accepted and the entry expired (not stale), got %v, expired %v, stale %v", tc.now, accepted(r), refs(st.Expired), refs(st.Stale))
		}
		if !tc.accepted && r.Worst() != diagnose.SeverityError {
			t.Errorf("%s: an expired entry must let the error count again: worst %q", tc.now, r.Worst())
		}
	}
	// An RFC 3339 expiry is exact.
	e := entry("head-crashloop", "ml/*", "", "2025-06-30T12:00:00Z", 1)
	if e.Expired(day.Add(11*time.Hour)) || !e.Expired(day.Add(12*time.Hour)) {
		t.Error("RFC 3339 expiry")
	}
}

// Stale needs the run to have looked: not when the rule was blind, not when a NAME or selector
// left the entry's clusters out.
func TestApplyStaleScope(t *testing.T) {
	s := &Set{Entries: []Entry{
		entry("node-pressure", "ml/*", "", "2025-07-01", 1),
		entry("operator-missing", "", "*/*", "2025-07-01", 2),
		entry("head-pending", "ml/serve", "", "2025-07-01", 3),
		entry("head-pending", "ml/other", "", "2025-07-01", 4),
	}}
	r := report(day)
	r.Blind = []state.Gap{{Resource: "nodes"}}
	if st := Apply(r, s, Scope{Namespace: "ml", Narrowed: true}); fmtInts(refs(st.Stale)) != "2 3" {
		t.Errorf("narrowed, nodes blind: stale %v, want 2 3", refs(st.Stale))
	}
	r = report(day)
	if st := Apply(r, s, Scope{Namespace: "ml"}); fmtInts(refs(st.Stale)) != "1 2 3 4" {
		t.Errorf("whole namespace: stale %v, want 1 2 3 4", refs(st.Stale))
	}
	r = report(day)
	r.Blind = []state.Gap{{Resource: "deployments"}}
	if st := Apply(r, s, Scope{}); fmtInts(refs(st.Stale)) != "1 3 4" {
		t.Errorf("deployments blind: stale %v, want 1 3 4", refs(st.Stale))
	}
}

// rayService: entries accept the findings about the RayServices they name; cluster: and
// operator: entries never accept them.
func TestApplyRayServices(t *testing.T) {
	f := diagnose.Finding{Rule: "rayservice-no-cluster", Severity: diagnose.SeverityError, Object: state.Ref{Kind: "RayService", Namespace: "serve", Name: "web"}}
	f.RayService = &f.Object
	r := &diagnose.Report{Now: day, RayServices: []diagnose.ServiceReport{{Namespace: "serve", Name: "web", Health: diagnose.HealthError}},
		Findings: []diagnose.Finding{f}}
	op := entry("rayservice-no-cluster", "", "serve/web", "2025-07-01", 1)
	cl := entry("rayservice-no-cluster", "serve/*", "", "2025-07-01", 2)
	s := &Set{Files: []string{"a.yaml"}, Entries: []Entry{op, cl}}
	Apply(r, s, Scope{Namespace: "serve"})
	if got := accepted(r); len(got) != 0 {
		t.Fatalf("accepted %q by operator: or cluster: entries", got)
	}
	rs := entry("rayservice-no-cluster", "", "", "2025-07-01", 3)
	rs.RayService = "serve/web*"
	Apply(r, &Set{Files: []string{"a.yaml"}, Entries: []Entry{rs}}, Scope{Namespace: "serve"})
	if got := accepted(r); strings.Join(got, "|") != "rayservice-no-cluster  a.yaml:3" || r.RayServices[0].Health != diagnose.HealthHealthy {
		t.Errorf("accepted %q, health %s; want the rayService: entry's, healthy", got, r.RayServices[0].Health)
	}
}

// A file: entry accepts doctor -f's findings about the files of its glob, and is stale only in a
// run that read such a file.
func TestApplyFiles(t *testing.T) {
	set, err := Parse("a.yaml", []byte(`apiVersion: kubectl-ray.io/v1alpha1
kind: AcceptedFindings
accept:
- {rules: [manifest-unknown-field], file: "manifests/ray-*.yaml", reason: upstream chart, expires: 2025-12-31}
- {rules: [manifest-start-param-not-string], file: "other/*.yaml", reason: not read here, expires: 2025-12-31}
- {rules: [manifest-start-param-not-string], file: "manifests/*.yaml", reason: fixed soon, expires: 2025-12-31}
`))
	if err != nil {
		t.Fatal(err)
	}
	src := func(file string) *diagnose.Source { return &diagnose.Source{File: file, Line: 3} }
	r := &diagnose.Report{Now: day, Findings: []diagnose.Finding{
		{Rule: "manifest-unknown-field", Severity: diagnose.SeverityWarning, Cluster: state.Ref{Namespace: "ml", Name: "a"}, Source: src("./manifests/ray-a.yaml")},
		{Rule: "manifest-unknown-field", Severity: diagnose.SeverityWarning, Cluster: state.Ref{Namespace: "ml", Name: "b"}, Source: src("manifests/sub/ray-b.yaml")},
		{Rule: "manifest-unknown-field", Severity: diagnose.SeverityWarning, Cluster: state.Ref{Namespace: "ml", Name: "live"}},
	}}
	st := Apply(r, set, Scope{})
	if got := accepted(r); strings.Join(got, ";") != "manifest-unknown-field a a.yaml:4" {
		t.Errorf("accepted %q: want only ray-a.yaml's (a glob never crosses a slash, a live finding has no file)", got)
	}
	if got := refs(st.Stale); len(got) != 1 || got[0] != 6 {
		t.Errorf("stale %v: want line 6 (its files were read), not line 5 (none of other/ was)", got)
	}
	if _, err := Parse("b.yaml", []byte("apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\naccept:\n- {rules: [head-crashloop], file: x.yaml, reason: r, expires: 2025-12-31}\n")); err == nil ||
		!strings.Contains(err.Error(), "b.yaml:4: rule head-crashloop is not about a spec") {
		t.Errorf("a file: entry with a live-state rule: %v", err)
	}
}
