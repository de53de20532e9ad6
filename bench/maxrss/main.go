// Command maxrss runs a command and reports its peak resident set size and wall time.
//
// Benchmarks start the process they measure through it because Linux charges the forking
// process to the child: Go's os/exec starts children with vfork (CLONE_VM), and on exec the
// kernel folds the high-water RSS of the memory the child borrowed, the parent's, into the
// child's ru_maxrss. A benchmark that has filled a sandbox and reads its children's
// ProcessState.SysUsage() sees its own size (a 300 MiB parent reports 300 MiB for /bin/true).
// This launcher is small, so what it reads of its child is the child's own.
//
//	maxrss -o result.json -- kubectl-ray doctor -A -o json
//
// The command's stdin, stdout and stderr are passed through; maxrss exits with its exit code and
// writes {"maxRSSBytes": N, "wallNanos": N} to the -o file.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

type result struct {
	MaxRSSBytes int64 `json:"maxRSSBytes"`
	WallNanos   int64 `json:"wallNanos"`
}

func main() {
	out := flag.String("o", "", "file to write the result to (JSON)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: maxrss -o FILE -- COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "maxrss: no resource usage on this platform")
		os.Exit(2)
	}
	// ru_maxrss is in KiB on Linux.
	b, _ := json.Marshal(result{MaxRSSBytes: ru.Maxrss * 1024, WallNanos: wall.Nanoseconds()})
	if err := os.WriteFile(*out, b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(2)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
