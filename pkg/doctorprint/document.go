package doctorprint

import (
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// APIVersion and Kind identify the -o json|yaml document; a breaking change bumps the version.
const (
	APIVersion = schema.APIVersion
	Kind       = "DoctorReport"
)

// Document is the -o json|yaml report; docs/doctor.md describes every field.
type Document struct {
	APIVersion string                   `json:"apiVersion"`
	Kind       string                   `json:"kind"`
	Metadata   Metadata                 `json:"metadata"`
	Summary    diagnose.Summary         `json:"summary"`
	Operators  []ray.Operator           `json:"operators"`
	Clusters   []diagnose.ClusterReport `json:"clusters"`
	// RayJobs are the RayJobs checked; absent when there were none.
	RayJobs []diagnose.JobReport `json:"rayJobs,omitempty"`
	// RayServices are the RayServices checked by the rules about a RayService itself; absent
	// when there were none.
	RayServices []diagnose.ServiceReport `json:"rayServices,omitempty"`
	Findings    []Finding                `json:"findings"`
	// Blind lists what could not be read; rules that need it did not run.
	Blind []state.Gap `json:"blind"`
	// Acceptance is what the accept files did; absent when none was read.
	Acceptance *accept.Status `json:"acceptance,omitempty"`
	// Manifests is what doctor -f read; absent without -f.
	Manifests *Manifests `json:"manifests,omitempty"`
}

// Metadata says when and over what the report was made.
type Metadata struct {
	GeneratedAt time.Time `json:"generatedAt"`
	// Namespace checked; "" means all namespaces.
	Namespace string `json:"namespace"`
	Selector  string `json:"selector,omitempty"`
	Target    string `json:"target,omitempty"`
	FailOn    string `json:"failOn"`
}

// Finding is diagnose.Finding on the wire, without a cluster for cluster-independent rules.
type Finding struct {
	Rule     string            `json:"rule"`
	Severity diagnose.Severity `json:"severity"`
	Cluster  *state.Ref        `json:"cluster,omitempty"`
	RayJob   *state.Ref        `json:"rayJob,omitempty"`
	// RayService is set on the findings of the rules about a RayService itself.
	RayService *state.Ref           `json:"rayService,omitempty"`
	Object     state.Ref            `json:"object"`
	Message    string               `json:"message"`
	Remedy     string               `json:"remedy"`
	Evidence   map[string]string    `json:"evidence,omitempty"`
	Accepted   *diagnose.Acceptance `json:"accepted,omitempty"`
	// Field and Source say where, in the object and in its file (doctor -f), the finding is.
	Field  string           `json:"field,omitempty"`
	Source *diagnose.Source `json:"source,omitempty"`
}

// Manifests is what doctor -f read: absent without -f.
type Manifests struct {
	Files     int            `json:"files"`
	Documents int            `json:"documents"`
	Skipped   map[string]int `json:"skipped"`
	// Errors are the files that could not be read or do not parse, one line each.
	Errors []string `json:"errors"`
	// Offline: no cluster was asked (OfflineReason says why); the operator's rules did not run.
	Offline       bool   `json:"offline"`
	OfflineReason string `json:"offlineReason,omitempty"`
	// NotRun are the rules that did not run on the files.
	NotRun []string `json:"notRun"`
}

func (w Report) document() Document {
	r := w.Report
	d := Document{
		APIVersion: APIVersion, Kind: Kind,
		Metadata:  Metadata{GeneratedAt: r.Now.UTC(), Namespace: w.Namespace, Selector: w.Selector, FailOn: w.FailOn},
		Summary:   r.Summary(),
		Operators: r.Operators, Clusters: r.Clusters, RayJobs: r.RayJobs, RayServices: r.RayServices, Findings: []Finding{}, Blind: r.Blind, Acceptance: w.Acceptance,
	}
	if w.Target != nil {
		d.Metadata.Target = w.Target.Name
		if w.Target.Kind != "" {
			d.Metadata.Target = string(w.Target.Kind) + "/" + w.Target.Name
		}
	}
	if d.Blind == nil {
		d.Blind = []state.Gap{}
	}
	for _, f := range r.Findings {
		wf := Finding{Rule: f.Rule, Severity: f.Severity, RayJob: f.RayJob, RayService: f.RayService, Object: f.Object, Message: f.Message, Remedy: f.Remedy, Evidence: f.Evidence, Accepted: f.Accepted,
			Field: f.Field, Source: f.Source}
		if f.Cluster.Name != "" {
			c := f.Cluster
			wf.Cluster = &c
		}
		d.Findings = append(d.Findings, wf)
	}
	d.Manifests = w.Files.section()
	return d
}

// manifestsSection is doctor -f's part of the document, nil without -f.
func (ff *Files) section() *Manifests {
	if ff == nil {
		return nil
	}
	m := &Manifests{Files: ff.Set.Files, Documents: len(ff.Set.Documents), Skipped: ff.Set.Skipped, Errors: []string{},
		Offline: !ff.Online, OfflineReason: ff.OfflineWhy, NotRun: notRun(ff.Online)}
	for _, e := range ff.Set.Errors {
		m.Errors = append(m.Errors, e.Error())
	}
	if !ff.Online {
		m.OfflineReason = ff.OfflineWhy
	}
	return m
}
