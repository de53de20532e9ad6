package doctor

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// failThreshold is the severity --fail-on names, "" for never.
func failThreshold(failOn string) (diagnose.Severity, error) {
	switch failOn {
	case "error":
		return diagnose.SeverityError, nil
	case "warning":
		return diagnose.SeverityWarning, nil
	case "never":
		return "", nil
	}
	return "", exit.Usagef("unknown --fail-on %q: use --fail-on error|warning|never", failOn)
}

// threshold is --fail-on's severity, "" for never (Validate has checked it).
func (o *Options) threshold() diagnose.Severity {
	t, _ := failThreshold(o.failOn)
	return t
}

// Validate checks flags before anything is read; it changes nothing.
func (o *Options) Validate() error {
	if err := o.output.Validate(); err != nil {
		return err
	}
	if o.target != nil {
		if err := cmdutil.NameScope(o.target.Name, o.allNamespaces); err != nil {
			return err
		}
	}
	if _, err := failThreshold(o.failOn); err != nil {
		return err
	}
	if err := o.validateMinSeverity(); err != nil {
		return err
	}
	if err := o.validateWatch(); err != nil {
		return err
	}
	if err := o.ray.validate(o.watch); err != nil {
		return err
	}
	if err := o.validateFiles(); err != nil {
		return err
	}
	if err := o.validateFrom(); err != nil {
		return err
	}
	if _, err := labels.Parse(o.selector); err != nil {
		return exit.Usagef("bad label selector %q: %v; write it as kubectl does, e.g. -l team=ml,env!=dev", o.selector, err)
	}
	return nil
}
