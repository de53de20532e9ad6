package chaos

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// aimWords are the help words that differ between the experiments that take something away under
// the probe (head-kill, drain, worker-kill); every other word of their probe flags is the same.
type aimWords struct {
	serviceDefault string // what --service defaults for, e.g. "rayservice/NAME"
	step           string // "the kill", "the cordon"
	done           string // what happens after a healthy warm-up, e.g. "the head is killed"
	untilRecovered string // --until-recovered's help
	timeout        string // --timeout's help
}

// bindAim binds what such an experiment probes and for how long (experiment.Aim), and the
// probe's own flags; completeAim records which of them were given.
func bindAim(fl *pflag.FlagSet, a *experiment.Aim, p *experiment.ProbeSettings, w aimWords) {
	fl.StringVar(&a.Target, "target", "", "Probe this URL (http or https); its path is the default --path")
	fl.StringVar(&a.Service, "service", "", "Probe this Service through port-forwards to its ready endpoint pods (default for "+w.serviceDefault+": NAME-serve-svc)")
	fl.IntVar(&a.Port, "port", 0, "The --service port to probe (default 8000 for a RayService's serve Service)")
	fl.StringVar(&p.Path, "path", "", "Request path (and query), e.g. /healthz (default /)")
	fl.StringVar(&p.Data, "data", "", "Request body")
	fl.StringArrayVar(&p.Headers, "header", nil, "Request header K:V (repeatable); Host:NAME sets the Host")
	fl.DurationVar(&p.Warmup, "warmup", 10*time.Second, "Probe this long before "+w.step+"; "+w.done+" only if every warm-up request succeeded")
	fl.DurationVar(&a.After, "after", 60*time.Second, "Probe this long after "+w.step+" (or use --until-recovered)")
	fl.BoolVar(&a.UntilRecovered, "until-recovered", false, w.untilRecovered)
	fl.DurationVar(&a.Timeout, "timeout", 5*time.Minute, w.timeout)
	addProbeFlags(fl, p)
	fl.DurationVar(&p.RequestTimeout, "request-timeout", probe.DefaultTimeout, "Per-request timeout of the probe (on this command it replaces kubectl's --request-timeout for API calls, which then use client-go's defaults)")
}

// completeAim records which of bindAim's flags were given: a default is not a choice.
func completeAim(cmd *cobra.Command, a *experiment.Aim, p *experiment.ProbeSettings) {
	completeProbeFlags(cmd, p)
	a.AfterSet = cmd.Flags().Changed("after")
	a.PortSet = cmd.Flags().Changed("port")
}

// clusterOrService reads the argument of a command that takes a RayCluster, or a RayService as
// rayservice/NAME (head-kill, worker-kill): one of the two names is set.
func clusterOrService(arg string) (cluster, rayService string, err error) {
	t, err := ray.ParseTarget(arg, ray.KindRayCluster, ray.KindRayService)
	if err != nil || t.Name == "" {
		return "", "", exit.Usagef("cannot target %q: name a RayCluster, or a RayService as rayservice/NAME", arg)
	}
	if t.Kind == ray.KindRayService {
		return "", t.Name, nil
	}
	return t.Name, "", nil
}
