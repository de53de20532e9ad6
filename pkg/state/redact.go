package state

import (
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// Redactor is the redactor for text quoted from a snapshot (kubelet and operator messages, which
// can echo what a user put in a command line or an address): it knows every secret value the
// loader collected from what it trimmed (s.Secrets), those of every spec the snapshot still
// holds, and extra (what a writer found beyond the snapshot's specs: the bundle's Secret
// references, say). No rule quotes env values, secret references or Redis addresses; this is the
// line of defence for what rules quote from the API.
func Redactor(s *Snapshot, extra ...redact.Set) *redact.Redactor {
	set := redact.Set{}
	set.Merge(s.Secrets)
	for _, e := range extra {
		set.Merge(e)
	}
	for i := range s.Pods {
		set.AddPodSpec(&s.Pods[i].Spec)
	}
	for i := range s.Clusters {
		set.AddClusterSpec(&s.Clusters[i].Spec)
	}
	for i := range s.Services {
		set.AddRayServiceSpec(&s.Services[i].Spec)
	}
	for i := range s.Jobs {
		set.AddRayJobSpec(&s.Jobs[i].Spec)
	}
	return redact.New(set)
}
