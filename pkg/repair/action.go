package repair

import (
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Action is one pod delete. UID and ResourceVersion are what the planner saw: the delete carries
// them as preconditions, so a pod that changed since is left alone.
type Action struct {
	Rule            string    `json:"rule"`
	Cluster         state.Ref `json:"cluster"`
	Pod             state.Ref `json:"pod"`
	ResourceVersion string    `json:"resourceVersion"`
	Node            string    `json:"node,omitempty"`
	// GracePeriodSeconds is nil (the pod's own grace period) or 0 (force, stuck heads only).
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	Why                string `json:"why"`
	// Summary is the evidence in a few words (the pod's phase, reason and the first sentence of
	// its message): what the plan line and the Events say. Why has all of it.
	Summary string `json:"-"`
}

// Force reports whether the action is a force delete.
func (a Action) Force() bool { return a.GracePeriodSeconds != nil && *a.GracePeriodSeconds == 0 }

// Verb is how the action reads in the plan and in Events.
func (a Action) Verb() string {
	if a.Force() {
		return "force-delete (grace period 0)"
	}
	return "delete"
}

// Skip is a finding heal will not act on, and why.
type Skip struct {
	Rule    string    `json:"rule"`
	Cluster state.Ref `json:"cluster"`
	Object  state.Ref `json:"object"`
	Why     string    `json:"why"`
}

// HealPlan is what heal would do: the deletes, and the head findings it cannot fix.
type HealPlan struct {
	Actions     []Action `json:"actions"`
	NotHealable []Skip   `json:"notHealable"`
	// Accepted are the deletes heal would have planned for findings an accept file accepts;
	// heal leaves them alone unless asked to include them. Filled by the heal command.
	Accepted []Skip `json:"accepted,omitempty"`
	// Stuck counts head-terminating-stuck findings in scope, healable or not: Force with none
	// is a usage error.
	Stuck int `json:"-"`
	// FinalizerRemovals are the Redis cleanup finalizers heal removes (RemoveGCSFTFinalizer).
	FinalizerRemovals []FinalizerRemoval `json:"finalizerRemovals,omitempty"`
	// FinalizersStuck counts gcs-ft-finalizer-stuck findings in scope: the flag with none is a
	// usage error.
	FinalizersStuck int `json:"-"`
}

// Empty reports whether there is nothing to delete or remove.
func (p HealPlan) Empty() bool { return len(p.Actions) == 0 && len(p.FinalizerRemovals) == 0 }

// refLess orders refs by namespace, name and UID: the order of a plan and of its report.
func refLess(a, b state.Ref) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}
