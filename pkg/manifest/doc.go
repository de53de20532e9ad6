// Package manifest reads RayCluster, RayService and RayJob documents from files, directories and
// stdin (what `kubectl apply -f` reads, and what `helm template` or `kubectl kustomize` prints)
// into a state.Snapshot, so that doctor checks a spec before it is applied (kuberay #736,
// #1009). Each document keeps where it came from, file and line, and its YAML tree, so that a
// finding points a reviewer at the line of the field it is about.
//
// Nothing here talks to the API server: reading files is the offline half of doctor -f.
package manifest
