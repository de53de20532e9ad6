package diagnose

import "github.com/kubectl-ray/kubectl-ray/pkg/state"

// Reads is what these rules read of the objects the loaders must filter themselves (the Events,
// the submitter pods, the clusters checked for a target): the commands hand it to pkg/load.
var Reads = state.Reads{
	KeepEvent:     KeepEvent,
	KeepWarning:   KeepWarning,
	SubmitterPods: SubmitterPodSelector,
	Checked:       Checked,
}
