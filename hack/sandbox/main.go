// Command sandbox builds, starts and stops kubectl-ray's local control plane (see test/sandbox):
//
//	go run ./hack/sandbox build [--operator v1.1.1,v1.5.0,v1.6.0,v1.7.0|none]
//	go run ./hack/sandbox up [--operator v1.1.1|v1.5.0|v1.6.0|v1.7.0|none] [--nodes N] [--real-node] [--dir D]
//	go run ./hack/sandbox down [--dir D]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

const usage = `usage: sandbox build [--operator v1.1.1,v1.5.0,v1.6.0,v1.7.0|none] | up [--operator v1.1.1|v1.5.0|v1.6.0|v1.7.0|none] [--nodes N] [--real-node] [--dir D] | down [--dir D]`

func main() {
	if len(os.Args) < 2 {
		fail(usage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := sandbox.Config{}
	fs := flag.NewFlagSet(os.Args[1], flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&cfg.Dir, "dir", "", "state directory of this sandbox (default .sandbox/default in the checkout)")
	switch os.Args[1] {
	case "up":
		fs.StringVar(&cfg.Operator, "operator", sandbox.DefaultOperator, "KubeRay operator: "+strings.Join(sandbox.Operators, ", ")+" or none")
		fs.IntVar(&cfg.Nodes, "nodes", 3, "fake nodes to create")
		fs.BoolVar(&cfg.RealNode, "real-node", false, "add the machine's one real node (kubelet, containerd, runc; root only)")
	case "build":
		fs.Func("operator", "KubeRay operators to build, comma-separated (default all: "+strings.Join(sandbox.Operators, ",")+"); none builds only the control plane", func(s string) error {
			for _, v := range strings.Split(s, ",") {
				if v = strings.TrimSpace(v); v != "" {
					cfg.Build = append(cfg.Build, v)
				}
			}
			return nil
		})
	case "down":
	default:
		fail(fmt.Sprintf("unknown command %q; %s", os.Args[1], usage))
	}
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fail(fmt.Sprintf("unexpected argument %q; %s", fs.Arg(0), usage))
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = sandbox.Build(ctx, cfg, os.Stderr)
	case "up":
		// Only what this sandbox runs: another operator version never makes `up` wait.
		cfg.Build = []string{cfg.Operator}
		if err = sandbox.Build(ctx, cfg, os.Stderr); err == nil {
			var sb *sandbox.Sandbox
			if sb, err = sandbox.Up(ctx, cfg, os.Stderr); err == nil {
				fmt.Printf("export KUBECONFIG=%s\n", sb.Kubeconfig())
			}
		}
	case "down":
		err = sandbox.Down(cfg, os.Stderr)
	}
	if err != nil {
		fail("sandbox " + os.Args[1] + ": " + err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
