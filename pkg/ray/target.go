package ray

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is the kind of object a command-line target names.
type Kind string

// The kinds a target can name.
const (
	KindRayCluster Kind = "RayCluster"
	KindRayService Kind = "RayService"
	KindRayJob     Kind = "RayJob"
	KindPod        Kind = "Pod"
)

// kindForms is what users type before the slash, as kubectl accepts it: the singular and plural
// resource names, each bare or qualified by its API group. KubeRay's CRDs declare no short
// names; pods have "po".
var kindForms = map[string]Kind{
	"raycluster": KindRayCluster, "rayclusters": KindRayCluster, "raycluster.ray.io": KindRayCluster, "rayclusters.ray.io": KindRayCluster,
	"rayservice": KindRayService, "rayservices": KindRayService, "rayservice.ray.io": KindRayService, "rayservices.ray.io": KindRayService,
	"rayjob": KindRayJob, "rayjobs": KindRayJob, "rayjob.ray.io": KindRayJob, "rayjobs.ray.io": KindRayJob,
	// KindRayCronJob (cronjob.go): KubeRay v1.7.0's.
	"raycronjob": KindRayCronJob, "raycronjobs": KindRayCronJob, "raycronjob.ray.io": KindRayCronJob, "raycronjobs.ray.io": KindRayCronJob,
	"pod": KindPod, "pods": KindPod, "po": KindPod,
}

// allKinds is the order accepted forms are listed in.
var allKinds = []Kind{KindRayCluster, KindRayService, KindRayJob, KindRayCronJob, KindPod}

// Target is an object named on the command line: NAME (Kind "") or KIND/NAME. What a bare NAME
// names is up to the command: a RayCluster for most, any Ray object for doctor.
type Target struct {
	Kind Kind
	Name string
}

// String is the target as a user would type it: NAME or lowercase-kind/NAME.
func (t Target) String() string {
	if t.Kind == "" {
		return t.Name
	}
	return strings.ToLower(string(t.Kind)) + "/" + t.Name
}

// TargetError is a target ParseTarget refused. Its message names the accepted forms.
type TargetError struct {
	Arg     string
	Allowed []Kind // the kinds the command accepts; never empty
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("cannot target %q: name %s", e.Arg, AcceptedForms(e.Allowed...))
}

// AcceptedForms lists the forms a target may take, as "NAME, raycluster/NAME or rayservice/NAME".
// No kinds means every kind.
func AcceptedForms(allowed ...Kind) string {
	if len(allowed) == 0 {
		allowed = allKinds
	}
	forms := []string{"NAME"}
	for _, k := range allowed {
		forms = append(forms, Target{Kind: k, Name: "NAME"}.String())
	}
	return strings.Join(forms[:len(forms)-1], ", ") + " or " + forms[len(forms)-1]
}

// ParseTarget reads NAME or KIND/NAME. KIND is case-insensitive and may be any form kubectl
// accepts for it (raycluster, rayclusters, raycluster.ray.io, rayclusters.ray.io; pod, pods, po).
// allowed limits the kinds; none means every kind. A bare NAME is always accepted, with Kind "".
// Errors are *TargetError.
func ParseTarget(arg string, allowed ...Kind) (Target, error) {
	bad := &TargetError{Arg: arg, Allowed: allowed}
	if len(allowed) == 0 {
		bad.Allowed = allKinds
	}
	form, name, slash := strings.Cut(arg, "/")
	if !slash {
		if arg == "" {
			return Target{}, bad
		}
		return Target{Name: arg}, nil
	}
	kind, known := kindForms[strings.ToLower(form)]
	// kubectl refuses a second slash too: no object name contains one.
	if !known || name == "" || strings.Contains(name, "/") || !slices.Contains(bad.Allowed, kind) {
		return Target{}, bad
	}
	return Target{Kind: kind, Name: name}, nil
}
