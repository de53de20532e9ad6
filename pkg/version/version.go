// Package version holds the client version, set at build time with
// -ldflags "-X github.com/kubectl-ray/kubectl-ray/pkg/version.Version=v1.2.3".
package version

// Version is the release this binary was built from; "dev" for a plain `go build`.
var Version = "dev"

// Commit is the git commit this binary was built from, when the build knew it.
var Commit = ""
