package diagnose

import "github.com/kubectl-ray/kubectl-ray/pkg/state"

// Severity orders findings; --fail-on compares against it.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rank is higher for more severe findings.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// Finding is one rule firing on one object. Rule IDs are stable: scripts match on them.
type Finding struct {
	Rule     string    `json:"rule"`
	Severity Severity  `json:"severity"`
	Cluster  state.Ref `json:"cluster"`
	Object   state.Ref `json:"object"`
	Message  string    `json:"message"`
	Remedy   string    `json:"remedy"`
	// Evidence holds the facts behind the message (node, reason, age, ...), never secret values.
	// It is for display: heal reads Facts.
	Evidence map[string]string `json:"evidence,omitempty"`
	// Facts are what heal reads, typed (facts.go); never printed.
	Facts Facts `json:"-"`
	// RayJob is set on the findings of RayJob rules (scope "rayjob"): the RayJob they are about.
	// Cluster is then the RayJob's RayCluster, or empty when it has none (not created yet, or
	// deleted after the job).
	RayJob *state.Ref `json:"rayJob,omitempty"`
	// RayService is set on the findings of the rules about a RayService itself (scope
	// "rayservice-object"): the RayService they are about; Cluster is then empty.
	RayService *state.Ref `json:"rayService,omitempty"`
	// Field is the path of the field the finding is about, in kubectl's dotted form with indices,
	// relative to Object's document (spec rules: a RayCluster's, or the RayService's for a finding
	// about the RayService itself), e.g. spec.workerGroupSpecs[1].rayStartParams.num-cpus.
	Field string `json:"field,omitempty"`
	// Source is where the object was read from a file (doctor -f); rules never set it.
	Source *Source `json:"source,omitempty"`
	// Accepted is set when an accept file accepted the finding (Report.Accept).
	Accepted *Acceptance `json:"accepted,omitempty"`
}

// Source is where a document was read: its file, and the line of the field (or of the
// document when the field is not written in it).
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

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
