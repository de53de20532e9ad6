package accept

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Flags are --accept FILE and one flag per threshold (ThresholdTable), shared by
// doctor and heal so both read the same files and measure with the same thresholds.
type Flags struct {
	Files      []string
	thresholds map[string]*time.Duration
	changed    func(string) bool

	// Getenv, Exists and ReadFile reach the environment and the disk; tests replace them.
	Getenv   func(string) string
	Exists   func(string) bool
	ReadFile func(string) ([]byte, error)
}

// AddFlags registers --accept and the threshold flags on cmd.
func AddFlags(cmd *cobra.Command, acceptUsage string) *Flags {
	a := &Flags{thresholds: map[string]*time.Duration{}, Getenv: os.Getenv, ReadFile: os.ReadFile,
		Exists: func(name string) bool { _, err := os.Stat(name); return err == nil }}
	fl := cmd.Flags()
	fl.StringArrayVar(&a.Files, "accept", nil, acceptUsage+" (repeatable; default: the files in $"+EnvVar+
		", else ./"+DefaultFile+" if it exists)")
	_ = cmd.MarkFlagFilename("accept", "yaml", "yml")
	def := diagnose.DefaultOptions()
	for _, t := range ThresholdTable {
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
func (a *Flags) Load() (*Set, diagnose.Options, error) {
	for _, t := range ThresholdTable {
		if a.changed(t.Flag) {
			if err := CheckThreshold(*a.thresholds[t.Key]); err != nil {
				return nil, diagnose.Options{}, exit.Usagef("--%s %v", t.Flag, err)
			}
		}
	}
	files, from := Locate(a.Files, a.Getenv, a.Exists)
	var set *Set
	if len(files) > 0 {
		s, err := Load(files, from, a.ReadFile)
		if err != nil {
			return nil, diagnose.Options{}, exit.Usagef("%v", err)
		}
		set = s
	}
	o := set.Options()
	for _, t := range ThresholdTable {
		if a.changed(t.Flag) {
			*t.Field(&o) = *a.thresholds[t.Key]
		}
	}
	return set, o, nil
}

// Warn prints, one line each, the entries that expired and those that matched nothing.
func Warn(w io.Writer, st Status) {
	for _, e := range st.Expired {
		fmt.Fprintf(w, "warning: %s:%d: accepted %s expired on %s, so its findings count again; fix them, or renew expires with a reason\n",
			e.File, e.Line, describe(e), e.Expires)
	}
	for _, e := range st.Stale {
		fmt.Fprintf(w, "warning: %s:%d: accepted %s matched no finding; remove the entry if the problem is fixed, or correct its rules and names\n",
			e.File, e.Line, describe(e))
	}
}

// describe is what e accepts, in the words of Entry.Describe.
func describe(e EntryRef) string {
	what, glob := "cluster", e.Cluster
	if e.Operator != "" {
		what, glob = "operator", e.Operator
	}
	return strings.Join(e.Rules, ",") + " on " + what + " " + glob
}

// Note is how an accepted finding reads where it is listed (doctor's table and JUnit, heal's
// skips): the entry's expiry, place and reason.
func Note(a *diagnose.Acceptance) string {
	return fmt.Sprintf("accepted, expires %s (%s:%d): %s", a.Expires, a.File, a.Line, a.Reason)
}
