package chaos

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// run starts the watches and the probe's endpoints, runs the kill, and reports.
func (o *HeadKillOptions) run(parent context.Context, c *kube.Clients, t *headKillTarget, advice []report.Advice) error {
	errOut := o.f.IOStreams.ErrOut
	ctx, stopSignals := signalContext(parent)
	defer stopSignals()
	// The watches and port-forwards outlive a Ctrl-C long enough for the report; they end
	// with this function.
	watchCtx, stopWatches := context.WithCancel(context.WithoutCancel(parent))
	defer stopWatches()

	tr := headkill.NewTracker(t.head, t.cluster)
	now := o.f.Now
	podSelector := headkill.LabelCluster + "=" + t.cluster
	if o.rayService != "" {
		// A RayService may replace the whole cluster: follow every Ray pod of the namespace.
		podSelector = headkill.LabelCluster
	}
	// Until the probe starts, Ctrl-C or a slow API server ends the run with nothing killed.
	startCtx, endStart := context.WithTimeout(ctx, watchStartTimeout)
	defer endStart()
	watchErrs, err := c.RunHeadKillWatch(watchCtx, startCtx, kube.HeadKillWatch{
		Namespace: o.namespace, PodSelector: podSelector, RayService: o.rayService, Cluster: t.cluster,
		OnPod:        func(p *corev1.Pod, deleted bool) { tr.Pod(p, deleted, now()) },
		OnRayCluster: func(rc *rayv1.RayCluster, deleted bool) { tr.RayCluster(rc, deleted, now()) },
		OnRayService: func(rs *rayv1.RayService, _ bool) { tr.RayService(rs, now()) },
	})
	if err != nil {
		return startError(ctx, startCtx, err)
	}

	var eps probe.Endpoints
	if t.service == "" {
		u, _ := url.Parse(o.targetBase)
		eps = probe.NewURL(u.Host, o.targetBase)
	} else {
		set := probe.NewSet(probe.RoundRobin, uint64(now().UnixNano()))
		feeder := headkill.NewFeeder(watchCtx, set, func(ctx context.Context, pod string, port int) (headkill.Forward, error) {
			return c.PortForward(ctx, o.namespace, pod, port)
		}, tr, errOut)
		defer feeder.Close()
		first := make(chan error, 1)
		synced := make(chan struct{})
		go func() {
			// The callback and the error below run in this goroutine, one after the other.
			delivered, failed := false, false
			err := c.WatchReadyEndpoints(watchCtx, o.namespace, t.service, t.portName, synced, func(ready []kube.ReadyEndpoint) {
				if failed || watchCtx.Err() != nil {
					return // the run already ended on the first error
				}
				err := feeder.Update(ready)
				if !delivered {
					delivered, failed = true, err != nil
					first <- err
				} else if err != nil {
					fmt.Fprintf(errOut, "warning: %v\n", err)
				}
			})
			switch {
			case err == nil || watchCtx.Err() != nil:
			case !delivered:
				first <- err
			default:
				// Mid-run (a token expired, RBAC revoked): the endpoints freeze from here on.
				fmt.Fprintf(errOut, "warning: the endpoint watch ended: %v; endpoint changes after this are not seen\n", err)
			}
		}()
		select {
		case err := <-first:
			if err != nil {
				return err
			}
		case <-startCtx.Done():
			return startError(ctx, startCtx, startCtx.Err())
		}
		if len(set.Names()) == 0 {
			return noReadyEndpoints(o.namespace, t.service)
		}
		eps = set
	}
	go func() {
		for err := range watchErrs {
			fmt.Fprintf(errOut, "warning: %v; the timeline may miss events\n", err)
		}
	}()

	prog := newProgress(errOut, cmdutil.IsTerminal(errOut), o.progressEvery)
	plan := headkill.Plan{
		Probe: o.probeCfg, Endpoints: eps, Warmup: o.warmup, After: o.after,
		UntilRecovered: o.untilRecovered, Timeout: o.timeout, Mode: o.mode, Tracker: tr,
		Kill:     func(ctx context.Context) error { return o.killHead(ctx, c, t) },
		Progress: prog.update, ProgressEvery: prog.every,
		Now: now,
	}
	res := headkill.Run(ctx, plan)
	prog.done()

	r := o.buildReport(t, res, tr, advice)
	if err := o.write(r); err != nil {
		return err
	}
	verdict := o.exitFor(res, r, t)
	if err := o.writeHTML(r); err != nil {
		// Validate checked the path, so this is rare (the directory went away, the disk is
		// full). The run happened: its verdict keeps precedence, and a passing run still fails.
		fmt.Fprintf(o.f.IOStreams.ErrOut, "error: cannot write --report-html %s: %v; the report above is complete\n", o.reportHTML, err)
		if verdict == nil {
			verdict = exit.Silent{Code: exit.API}
		}
	}
	return verdict
}

// watchStartTimeout bounds the start-up: the watches' first LISTs and the first port-forwards.
const watchStartTimeout = 60 * time.Second

// startError explains why the run ended before the probe started; nothing was killed.
func startError(signal, start context.Context, err error) error {
	switch {
	case signal.Err() != nil:
		return exit.Errorf(exit.Interrupted, "interrupted before the probe started: nothing was killed")
	case start.Err() != nil:
		return exit.Errorf(exit.API, "the watches and port-forwards did not start within %s (the API server is slow or failing): nothing was killed; check the cluster and run again", watchStartTimeout)
	}
	return err
}

func (o *HeadKillOptions) buildReport(t *headKillTarget, res *headkill.Outcome, tr *headkill.Tracker, advice []report.Advice) *report.Report {
	s := report.Settings{Cluster: o.targetName(), Namespace: o.namespace, Mode: o.mode, Target: o.probeTarget(t),
		Method: o.probeCfg.Method, Path: shownPath(o.probeCfg.Path), Rate: o.probeCfg.Rate, WarmupMs: o.warmup.Milliseconds(),
		RequestTimeout: o.requestTimeout.Milliseconds()}
	if o.untilRecovered {
		s.UntilRecovered, s.TimeoutMs = true, o.timeout.Milliseconds()
	} else {
		s.AfterMs = o.after.Milliseconds()
	}
	var slo report.SLO
	if o.maxErrorsSet {
		slo.MaxErrors = &o.maxErrors
	}
	if o.minAvailSet {
		slo.MinAvailability = &o.minAvailability
	}
	return report.Build(report.Input{Settings: s, Probe: res.Result, Timeline: tr.Timeline(), SLO: slo, Advice: advice})
}

// write prints the report in the asked format and the HTML page.
func (o *HeadKillOptions) write(r *report.Report) error {
	out := o.f.IOStreams.Out
	var err error
	switch o.output {
	case "json":
		err = report.WriteJSON(out, r)
	case "junit":
		err = report.WriteJUnit(out, r)
	default:
		err = report.WriteText(out, r, o.f.Color())
	}
	return err
}

// writeHTML writes the --report-html page, if asked.
func (o *HeadKillOptions) writeHTML(r *report.Report) error {
	if o.reportHTML == "" {
		return nil
	}
	f, err := os.Create(o.reportHTML)
	if err != nil {
		return err
	}
	if err := report.WriteHTML(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// exitFor is the exit code: an unfinished run first, then the SLO.
func (o *HeadKillOptions) exitFor(res *headkill.Outcome, r *report.Report, t *headKillTarget) error {
	switch {
	case res.Result != nil && res.Result.Interrupted:
		return exit.Errorf(exit.Interrupted, "interrupted: the report above covers what was seen")
	case res.WarmupFailed:
		w := res.Warmup
		return exit.Errorf(exit.Usage, "the warm-up failed against %s (%d ok, %d failed: http %d, connection %d, timeout %d), so nothing was killed; check --target/--service and that it answers 2xx",
			o.probeTarget(t), w.OK, w.Errors(), w.HTTPErrors, w.ConnErrors, w.Timeouts)
	case res.KillErr != nil:
		return o.killError(res.KillErr, t)
	case o.untilRecovered && !res.Recovered:
		fmt.Fprintf(o.f.IOStreams.ErrOut, "not recovered within --timeout %s\n", o.timeout)
		return exit.Silent{Code: exit.CheckFailed}
	case !r.Verdict.Passed:
		return exit.Silent{Code: exit.CheckFailed}
	}
	return nil
}

// progress prints one live line on a terminal, a plain line every `every` otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  string
}

func newProgress(w io.Writer, tty bool, every time.Duration) *progress {
	p := &progress{w: w, tty: tty, every: every}
	if tty {
		p.every = 200 * time.Millisecond
	}
	return p
}

func (p *progress) update(l probe.Live, head string) {
	line := fmt.Sprintf("%s; %s", l, head)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	} else if line != p.last {
		fmt.Fprintln(p.w, line)
	}
	p.last = line
}

func (p *progress) done() {
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
	}
}

// killHead reads the head again right before the kill, so the delete's uid and resourceVersion
// preconditions are current after the warm-up; a head replaced meanwhile is not killed.
func (o *HeadKillOptions) killHead(ctx context.Context, c *kube.Clients, t *headKillTarget) error {
	now, err := c.GetPodByName(ctx, t.head.Namespace, t.head.Name)
	if err != nil {
		return err
	}
	if now.UID != t.head.UID {
		// Not exit 1: no SLO was measured. The head that was the target no longer exists.
		return exit.Errorf(exit.NotFound, "head pod %s/%s was replaced during the warm-up (uid %s, was %s); nothing was killed; run again to target the new head",
			now.Namespace, now.Name, now.UID, t.head.UID)
	}
	return c.KillPod(ctx, now, o.killMode, false)
}
