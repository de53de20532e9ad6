package repair

import "github.com/kubectl-ray/kubectl-ray/pkg/fault"

// Options change what Plan may do.
type Options struct {
	// Force allows force-deleting (grace period 0) a head stuck Terminating on a node that is
	// NotReady, unreachable or gone. Nothing else is ever force-deleted.
	Force bool
	// StaleWorkers allows deleting the Running workers of a workers-stale finding.
	StaleWorkers bool
	// RemoveGCSFTFinalizer allows removing KubeRay's Redis cleanup finalizer from RayClusters
	// whose deletion it holds (gcs-ft-finalizer-stuck). Never without it: the removal leaves the
	// cluster's GCS data in Redis.
	RemoveGCSFTFinalizer bool
	// Name shows a setting in a skip's why, as the command's flag (exit.Flag); nil shows the
	// setting's own name.
	Name func(fault.Field) string
}

// The settings a skip's why names, for the command to show as its flags.
const (
	SetForce                fault.Field = "force"
	SetStaleWorkers         fault.Field = "stale-workers"
	SetRemoveGCSFTFinalizer fault.Field = "remove-gcs-ft-finalizer"
)

// name is how the command shows the setting f.
func (o Options) name(f fault.Field) string {
	if o.Name == nil {
		return string(f)
	}
	return o.Name(f)
}
