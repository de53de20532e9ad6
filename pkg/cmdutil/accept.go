package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// AcceptFlags are --accept FILE and one flag per threshold (accept.ThresholdTable), shared by
// doctor and heal so both read the same files and measure with the same thresholds.
type AcceptFlags struct {
	Files      []string
	thresholds map[string]*time.Duration
	changed    func(string) bool

	// Getenv, Exists and ReadFile reach the environment and the disk; tests replace them.
	Getenv   func(string) string
	Exists   func(string) bool
	ReadFile func(string) ([]byte, error)
}

// AddAcceptFlags registers --accept and the threshold flags on cmd.
func AddAcceptFlags(cmd *cobra.Command, acceptUsage string) *AcceptFlags {
	a := &AcceptFlags{thresholds: map[string]*time.Duration{}, Getenv: os.Getenv, ReadFile: os.ReadFile,
		Exists: func(name string) bool { _, err := os.Stat(name); return err == nil }}
	fl := cmd.Flags()
	fl.StringArrayVar(&a.Files, "accept", nil, acceptUsage+" (repeatable; default: the files in $"+accept.EnvVar+
		", else ./"+accept.DefaultFile+" if it exists)")
	_ = cmd.MarkFlagFilename("accept", "yaml", "yml")
	def := diagnose.DefaultOptions()
	for _, t := range accept.ThresholdTable {
		d := new(time.Duration)
		a.thresholds[t.Key] = d
		fl.DurationVar(d, t.Flag, *t.Field(&def), t.Usage+" (overrides thresholds."+t.Key+" in an accept file)")
	}
	a.changed = func(name string) bool { return cmd.Flags().Changed(name) }
	return a
}

// Load reads the accept files and returns them with the thresholds: diagnose's defaults, then the
// files' thresholds, then the flags. Every problem is a usage error naming file:line or the flag.
// The set is nil when no file was found.
func (a *AcceptFlags) Load() (*accept.Set, diagnose.Options, error) {
	for _, t := range accept.ThresholdTable {
		if a.changed(t.Flag) {
			if err := accept.CheckThreshold(*a.thresholds[t.Key]); err != nil {
				return nil, diagnose.Options{}, exit.Usagef("--%s %v", t.Flag, err)
			}
		}
	}
	files, from := accept.Locate(a.Files, a.Getenv, a.Exists)
	var set *accept.Set
	if len(files) > 0 {
		s, err := accept.Load(files, from, a.ReadFile)
		if err != nil {
			return nil, diagnose.Options{}, exit.Usagef("%v", err)
		}
		set = s
	}
	o := set.Options()
	for _, t := range accept.ThresholdTable {
		if a.changed(t.Flag) {
			*t.Field(&o) = *a.thresholds[t.Key]
		}
	}
	return set, o, nil
}

// WarnAcceptance prints, one line each, the entries that expired and those that matched nothing.
func WarnAcceptance(w io.Writer, st accept.Status) {
	for _, e := range st.Expired {
		fmt.Fprintf(w, "warning: %s:%d: accepted %s expired on %s, so its findings count again; fix them, or renew expires with a reason\n",
			e.File, e.Line, describe(e), e.Expires)
	}
	for _, e := range st.Stale {
		fmt.Fprintf(w, "warning: %s:%d: accepted %s matched no finding; remove the entry if the problem is fixed, or correct its rules and names\n",
			e.File, e.Line, describe(e))
	}
}

func describe(e accept.EntryRef) string {
	what, glob := "cluster", e.Cluster
	if e.Operator != "" {
		what, glob = "operator", e.Operator
	}
	return strings.Join(e.Rules, ",") + " on " + what + " " + glob
}
