// Package flagname names the flags that text outside the commands spells: doctor's remedies say
// `kubectl ray heal NAME -n NS --stale-workers`. The commands register each of these flags under
// its constant and the remedies print the same constant, so the two cannot drift apart. It is a
// leaf: pkg/diagnose and the commands both import it.
package flagname

// heal's flags that doctor's remedies name.
const (
	Force                = "force"
	StaleWorkers         = "stale-workers"
	RemoveGCSFTFinalizer = "remove-gcs-ft-finalizer"
)

// doctor's flags that doctor's remedies name (bundle's --ray is doctor's).
const (
	Ray         = "ray"
	RayTimeout  = "ray-timeout"
	RayDeadline = "ray-deadline"
)

// Flag is name as it is typed: "--stale-workers".
func Flag(name string) string { return "--" + name }
