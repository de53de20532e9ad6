package accept

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// Scope is what a run checked, so that an entry about clusters the run did not look at is not
// called stale.
type Scope struct {
	// Namespace checked; "" for all namespaces.
	Namespace string
	// Narrowed: a NAME or a label selector limited the clusters checked.
	Narrowed bool
}

// EntryRef names an entry in reports.
type EntryRef struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Rules    []string `json:"rules"`
	Cluster  string   `json:"cluster,omitempty"`
	Operator string   `json:"operator,omitempty"`
	RayJob   string   `json:"rayJob,omitempty"`
	// RayService is the entry's rayService: glob, for the rules about a RayService itself.
	RayService string `json:"rayService,omitempty"`
	// Manifest is the entry's file: glob, for doctor -f's findings.
	Manifest string `json:"manifest,omitempty"`
	Reason   string `json:"reason"`
	Expires  string `json:"expires"`
}

// Status is what the accept files did in one run.
type Status struct {
	Files []string `json:"files"`
	// Expired entries no longer accept anything: their findings count again.
	Expired []EntryRef `json:"expired"`
	// Stale entries are live but matched no finding in scope: the problem is gone, or the entry
	// has a typo in its names; remove or fix it.
	Stale []EntryRef `json:"stale"`
}

func ref(e *Entry) EntryRef {
	return EntryRef{File: e.Pos.File, Line: e.Pos.Line, Rules: e.Rules, Cluster: e.Cluster, Operator: e.Operator,
		RayJob: e.RayJob, RayService: e.RayService, Manifest: e.File, Reason: e.Reason, Expires: e.ExpiresText}
}

// Apply marks the findings of r that a live entry of s accepts (the first such entry, in file
// order), judging expiry at r.Now, and reports the expired and stale entries.
func Apply(r *diagnose.Report, s *Set, sc Scope) Status {
	st := Status{Files: s.Files, Expired: []EntryRef{}, Stale: []EntryRef{}}
	if st.Files == nil {
		st.Files = []string{}
	}
	matched := make([]bool, len(s.Entries))
	live := make([]bool, len(s.Entries))
	for i := range s.Entries {
		live[i] = !s.Entries[i].Expired(r.Now)
		if !live[i] {
			st.Expired = append(st.Expired, ref(&s.Entries[i]))
		}
	}
	mark(r, func(f *diagnose.Finding) *diagnose.Acceptance {
		var by *diagnose.Acceptance
		for i := range s.Entries {
			e := &s.Entries[i]
			if !live[i] || !e.Matches(f) {
				continue
			}
			matched[i] = true
			if by == nil {
				by = &diagnose.Acceptance{Reason: e.Reason, Expires: e.ExpiresText, File: e.Pos.File, Line: e.Pos.Line}
			}
		}
		return by
	})
	blind := map[string]bool{}
	for _, g := range r.Blind {
		blind[g.Resource] = true
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if live[i] && !matched[i] && couldMatch(e, r, sc, blind) {
			st.Stale = append(st.Stale, ref(e))
		}
	}
	return st
}

// matchFile matches a file as doctor -f named it against a file: glob.
func matchFile(glob, file string) bool {
	ok, _ := path.Match(glob, path.Clean(filepath.ToSlash(file)))
	return ok
}

// Matches reports whether e is about f: one of its rules, and its glob matches f's cluster (or,
// for operator rules, which have no cluster, the operator Deployment the finding names; for
// rayjob-* rules, the RayJob).
func (e *Entry) Matches(f *diagnose.Finding) bool {
	if !e.hasRule(f.Rule) {
		return false
	}
	switch {
	case e.Operator != "":
		return f.Cluster.Name == "" && f.RayJob == nil && f.RayService == nil && matchGlob(e.Operator, f.Object.Namespace, f.Object.Name)
	case e.RayJob != "":
		return f.RayJob != nil && matchGlob(e.RayJob, f.RayJob.Namespace, f.RayJob.Name)
	case e.RayService != "":
		return f.RayService != nil && matchGlob(e.RayService, f.RayService.Namespace, f.RayService.Name)
	case e.File != "":
		return f.Source != nil && matchFile(e.File, f.Source.File)
	}
	return f.RayJob == nil && f.RayService == nil && f.Cluster.Name != "" && matchGlob(e.Cluster, f.Cluster.Namespace, f.Cluster.Name)
}

// couldMatch reports whether the run looked where e points, so that matching nothing means the
// entry is stale: at least one of its rules ran (not blind), and, for cluster entries, the run
// covered the entry's namespace (or, when a NAME or selector narrowed it, a cluster the entry names).
func couldMatch(e *Entry, r *diagnose.Report, sc Scope, blind map[string]bool) bool {
	ran := false
	for _, id := range e.Rules {
		if info, ok := catalogRule(id); ok && (info.Needs == "" || !blind[info.Needs]) {
			ran = true
		}
	}
	if !ran || e.Operator != "" {
		return ran
	}
	if e.File != "" {
		// Stale only when doctor -f read a file of the glob: a live run reads no file.
		for _, f := range r.Findings {
			if f.Source != nil && matchFile(e.File, f.Source.File) {
				return true
			}
		}
		return false
	}
	_, glob := e.Pattern()
	if sc.Narrowed {
		if e.RayJob != "" {
			for _, j := range r.RayJobs {
				if matchGlob(glob, j.Namespace, j.Name) {
					return true
				}
			}
			return false
		}
		if e.RayService != "" {
			for _, sv := range r.RayServices {
				if matchGlob(glob, sv.Namespace, sv.Name) {
					return true
				}
			}
			return false
		}
		for _, c := range r.Clusters {
			if matchGlob(glob, c.Namespace, c.Name) {
				return true
			}
		}
		return false
	}
	if sc.Namespace == "" {
		return true
	}
	nsGlob, _, _ := strings.Cut(glob, "/")
	ok, _ := path.Match(nsGlob, sc.Namespace)
	return ok
}
