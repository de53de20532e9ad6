// Command kubectl-ray is the kubectl plugin: `kubectl ray doctor|heal|chaos|version`.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
