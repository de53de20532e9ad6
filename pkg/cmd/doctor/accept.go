package doctor

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// acceptance is doctor's part of accept files: the flags, what was read, and what it did.
type acceptance struct {
	flags *accept.Flags
	set   *accept.Set
	// rules are the thresholds: defaults, then the files, then the flags.
	rules  diagnose.Options
	status *accept.Status
}

func (a *acceptance) addFlags(cmd *cobra.Command) {
	a.flags = accept.AddFlags(cmd, "Report the findings this file accepts as accepted, and never fail on them")
}

// load reads the accept files before anything else: a malformed file stops doctor before any
// API call, so a typo never silently accepts everything.
func (a *acceptance) load() error {
	set, rules, err := a.flags.Load()
	a.set, a.rules = set, rules
	return err
}

// applyAcceptance marks the accepted findings of r and warns about expired and stale entries.
func (o *Options) applyAcceptance(r *diagnose.Report) {
	if o.acc.set == nil {
		return
	}
	st := accept.Apply(r, o.acc.set, accept.Scope{Namespace: o.namespace, Narrowed: o.target != nil || o.selector != ""})
	o.acc.status = &st
	accept.Warn(o.f.IOStreams.ErrOut, st)
}
