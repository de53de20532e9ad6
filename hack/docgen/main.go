// Command docgen writes the command reference (docs/reference) from the cobra tree: `make docs`.
package main

import (
	"fmt"
	"os"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/docs"
)

func main() {
	dir := "docs/reference"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := docs.Write(dir, docs.Render(docs.Tree())); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
