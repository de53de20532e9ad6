// Package accept reads accept files: findings a team accepts for a while (each with a reason and
// an expiry date) and the thresholds doctor's rules measure against. It is pure: parsing takes
// bytes, matching takes a report whose Now is the clock, so both are tested without a cluster.
package accept

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// APIVersion and Kind identify an accept file; a breaking change to the format bumps the version.
const (
	APIVersion = "kubectl-ray.io/v1alpha1"
	Kind       = "AcceptedFindings"
)

// Pos is where something was written: file and 1-based line.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Entry accepts the findings of Rules about the RayClusters Cluster matches, the KubeRay operator
// Deployments Operator matches, the RayJobs RayJob matches or the RayServices RayService
// matches, until Expires.
type Entry struct {
	Rules []string
	// Cluster is a "namespace/name" glob (path.Match: * never crosses the slash); "" in operator entries.
	Cluster string
	// Operator is a "namespace/name" glob of the operator Deployment; "" in cluster entries.
	Operator string
	// RayJob is a "namespace/name" glob of RayJobs, for the rayjob-* rules; "" in other entries.
	RayJob string
	// RayService is a "namespace/name" glob of RayServices, for the rules about a RayService
	// itself (rayservice-no-cluster); "" in other entries.
	RayService string
	// File is a path glob of the files doctor -f read, for the rules about a spec; "" in
	// other entries.
	File   string
	Reason string
	// Expires is the first instant the entry no longer accepts: 00:00 UTC of a date, or an RFC 3339 time.
	Expires     time.Time
	ExpiresText string
	Pos         Pos
}

// Expired reports whether e no longer accepts at now.
func (e *Entry) Expired(now time.Time) bool { return !now.Before(e.Expires) }

// Pattern is the glob the entry matches, with what it matches: "cluster" or "operator".
func (e *Entry) Pattern() (kind, glob string) {
	switch {
	case e.Operator != "":
		return "operator", e.Operator
	case e.RayJob != "":
		return "rayJob", e.RayJob
	case e.RayService != "":
		return "rayService", e.RayService
	case e.File != "":
		return "file", e.File
	}
	return "cluster", e.Cluster
}

// Describe names the entry in warnings: "head-crashloop on cluster ml/train-*".
func (e *Entry) Describe() string {
	kind, glob := e.Pattern()
	return strings.Join(e.Rules, ",") + " on " + kind + " " + glob
}

func (e *Entry) hasRule(id string) bool {
	for _, r := range e.Rules {
		if r == id {
			return true
		}
	}
	return false
}

// matchGlob matches "namespace/name" against a glob validated by checkGlob.
func matchGlob(glob, namespace, name string) bool {
	ok, _ := path.Match(glob, namespace+"/"+name)
	return ok
}

// Threshold is one threshold value and where it was set.
type Threshold struct {
	Value time.Duration
	Pos   Pos
}

// Set is every accept file read, in order.
type Set struct {
	Files   []string
	Entries []Entry
	// Thresholds by their key in the file (ThresholdInfo.Key).
	Thresholds map[string]Threshold
}

// Empty reports whether s accepts nothing and sets no threshold.
func (s *Set) Empty() bool { return s == nil || len(s.Entries) == 0 && len(s.Thresholds) == 0 }
