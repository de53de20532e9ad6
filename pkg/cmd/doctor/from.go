package doctor

import (
	"github.com/kubectl-ray/kubectl-ray/pkg/bundle"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// validateFrom checks --from against the flags that pick what the cluster is asked: a bundle's
// scope is the one it was made with.
func (o *Options) validateFrom() error {
	if o.from == "" {
		return nil
	}
	switch {
	case len(o.files.paths) > 0:
		return exit.Usagef("--from checks a bundle, -f manifests: pick one")
	case o.allNamespaces || o.selector != "":
		return exit.Usagef("--from checks what the bundle holds: -A and -l do not apply (it was made with its own)")
	case o.watch:
		return exit.Usagef("--from checks a bundle once: drop --watch")
	case o.ray.given && o.ray.on:
		return exit.Usagef("--from reads no cluster: drop --ray (Ray's view is checked where the bundle kept it)")
	}
	return nil
}

// runFrom is doctor --from: the snapshot a bundle was made from, rebuilt from the archive, through
// the same rules, offline. Without a NAME it checks what the bundle was made of, so the findings are
// those doctor gave when the bundle was made.
func (o *Options) runFrom() error {
	s, made, err := bundle.ReadSnapshot(o.from)
	if err != nil {
		return exit.Errorf(exit.CodeOf(err), "%s", exit.Message(err))
	}
	o.namespace, o.selector = made.Namespace, made.Selector
	if o.target == nil && made.Target != "" {
		t, err := ray.ParseTarget(made.Target, ray.KindRayCluster, ray.KindRayService, ray.KindRayJob, ray.KindRayCronJob)
		if err != nil {
			return exit.Usagef("the bundle %s names %q, which is not a raycluster/NAME, rayservice/NAME or rayjob/NAME", o.from, made.Target)
		}
		o.target = &t
	}
	return o.diagnose(s)
}
