// Package load builds doctor's snapshot (state.Snapshot) from a source: a live cluster through
// pkg/kube, once (FromAPI) or as caches kept current (Informers), and what a live cluster says of
// documents about to be applied (Admission). pkg/kube talks to the API and knows no rule;
// pkg/diagnose holds the rules and knows no API; this package is the one place that knows both:
// what to list for the rules, how to trim it as it arrives, and what a refusal leaves unseen.
// Manifests (pkg/manifest) and support bundles (pkg/bundle) are the other sources of the same
// snapshot.
package load
