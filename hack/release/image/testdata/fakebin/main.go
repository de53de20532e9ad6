// A stand-in for kubectl-ray in the image tests: it answers `version --client [-o json]` the
// way the real command does, with the version and commit given by -ldflags -X. Building it for
// two platforms takes a second; building kubectl-ray would take minutes.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

var version, commit string

func main() {
	switch strings.Join(os.Args[1:], " ") {
	case "version --client":
		fmt.Printf("Client Version: %s\n", version)
	case "version --client -o json":
		fmt.Printf(`{"clientVersion": {"version": %q, "commit": %q, "platform": "%s/%s"}}`+"\n", version, commit, runtime.GOOS, runtime.GOARCH)
	default:
		os.Exit(2)
	}
}
