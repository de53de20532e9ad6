// Package artifact holds the pieces that both a support bundle (pkg/bundle) and heal's evidence
// directory (pkg/evidence) are made of: a file with what the index says of it, a read that
// failed, a pod's container logs (which to read, under which limits, and what a kubelet's answer
// means), an object as redacted JSON (a bundle's) or YAML (heal's evidence) and Events as kubectl prints them. Neither of those packages
// needs the other for them.
package artifact
