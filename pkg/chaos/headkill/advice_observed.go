package headkill

import (
	"fmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// Observed advice rule IDs are stable: scripts and docs/chaos-head-kill.md refer to them.
const (
	AdviceNoErrors         = "no-errors"
	AdviceErrorsFromHead   = "errors-from-head"
	AdviceErrorsAfterGone  = "errors-after-head-gone"
	AdviceErrorsAfterReady = "errors-after-head-ready"
	AdviceClusterSwitched  = "active-cluster-switched"
	AdviceTimeouts         = "timeouts"
	AdviceConnErrors       = "connection-errors"
	AdviceNoEndpoints      = "no-endpoints"
	AdvicePartial          = "partial-run"
	AdviceWarmupFailed     = "warmup-failed"
)

// observedAdvice draws conclusions from this run only; each names the fact it rests on.
func observedAdvice(r *Report, kill timeline.Event, killed bool, res *probe.Result) []availability.Advice {
	var out []availability.Advice
	add := func(rule, format string, a ...any) {
		out = append(out, availability.Advice{Source: "observed", Rule: rule, Text: fmt.Sprintf(format, a...)})
	}
	if r.Probe.Interrupted {
		add(AdvicePartial, "The run was interrupted after %d of %s; the numbers cover only what was seen.",
			r.Probe.Scheduled, availability.Plural(r.Probe.Planned, "planned request", "planned requests"))
	}
	t := r.Totals
	if r.Probe.WarmupFailed {
		add(AdviceWarmupFailed, "Nothing was killed: %d of %s failed. The head is killed only after a warm-up "+
			"in which every request succeeds (2xx or 3xx); make the target answer, then run again.",
			t.Errors, availability.Plural(t.Requests, "warm-up request", "warm-up requests"))
	}
	if !killed {
		// The rest explains what a kill did to clients; without a kill it would blame one.
		return out
	}
	if t.Requests > 0 && t.Errors == 0 {
		add(AdviceNoErrors, "No request failed: the head kill was invisible to this client at %v/s.", r.Settings.Rate)
		return out
	}
	if kill.Object != "" {
		for _, e := range r.Endpoints {
			if e.Name == kill.Object && e.Errors > 0 {
				add(AdviceErrorsFromHead, "%d of %s came through the killed head pod %s: its Serve proxy was behind the Service. "+
					"Exclude the head from the serve Service (spec.excludeHeadPodFromServeSvc, KubeRay v1.3.0+) so only worker proxies take traffic.",
					e.Errors, availability.Plural(t.Errors, "error", "errors"), e.Name)
			}
		}
	}
	if r.ErrorWindow != nil {
		if g := r.Recovery.OldHeadGoneMs; g != nil {
			if last, ok := lastErrorOfOldHead(r, kill.Object); ok && last > *g {
				add(AdviceErrorsAfterGone, "Errors went on %s after the old head was gone: something still routed to it "+
					"(stale Service endpoints, kept-alive connections, or a client's DNS cache). Retry idempotent requests on the client.",
					seconds3(last-*g))
			}
		}
		if rd := r.Recovery.NewHeadReadyMs; rd != nil && r.ErrorWindow.LastMs > *rd {
			add(AdviceErrorsAfterReady, "Errors went on %s after the new head was Ready: the Serve applications were not serving yet. "+
				"Without GCS fault tolerance the apps are redeployed from scratch after a head restart.",
				seconds3(r.ErrorWindow.LastMs-*rd))
		}
	}
	if r.Recovery.ActiveClusterChanged {
		add(AdviceClusterSwitched, "The RayService switched traffic from RayCluster %s to %s: KubeRay built a whole new cluster "+
			"instead of restarting the head in place (KubeRay #1559). Enable GCS fault tolerance (external Redis) so the head restarts in place.",
			r.Recovery.ActiveClusterFrom, r.Recovery.ActiveClusterTo)
	}
	if t.Timeouts > 0 {
		add(AdviceTimeouts, "%s no answer within %dms: requests in flight on the killed pod were lost. "+
			"Give clients a timeout and a retry.", availability.Plural(t.Timeouts, "request got", "requests got"), r.Settings.RequestTimeout)
	}
	conn := t.ByClass[probe.ClassRefused.String()] + t.ByClass[probe.ClassReset.String()]
	if conn > 0 {
		add(AdviceConnErrors, "%s at the connection (refused or reset): a pod's proxy went away under open connections. "+
			"Retry on connection errors; they are safe to retry for idempotent requests.", availability.Plural(conn, "request failed", "requests failed"))
	}
	if n := t.ByClass[probe.ClassNoEndpoint.String()]; n > 0 {
		add(AdviceNoEndpoints, "For %s the Service had no ready endpoint at all: every serving pod was out at once. "+
			"Run more than one worker with a Serve proxy.", availability.Plural(n, "request", "requests"))
	}
	return out
}

// lastErrorOfOldHead is when the last error that can be blamed on routing to the killed head
// happened. With a Service target every request is attributed to its pod, so only the old head's
// own errors count (errors from other pods' proxies after it was gone are not "routed to it");
// with a URL target nothing is attributed, so every error counts.
func lastErrorOfOldHead(r *Report, oldHead string) (float64, bool) {
	if !r.Settings.TracksEndpoints() {
		return r.ErrorWindow.LastMs, true
	}
	for _, e := range r.Endpoints {
		if e.Name == oldHead && e.LastErrorMs != nil {
			return *e.LastErrorMs, true
		}
	}
	return 0, false
}

func seconds3(msv float64) string { return fmt.Sprintf("%.3fs", msv/1000) }
