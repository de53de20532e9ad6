// Package layering holds the test of which packages of this module may import which: the rules
// (pkg/diagnose) sit above the snapshot (pkg/state), Ray's and KubeRay's vocabulary (pkg/ray) and
// the API layer (pkg/kube), and below the commands, which know none of each other.
package layering
