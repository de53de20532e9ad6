package pressure

import (
	"fmt"
	"strings"
	"time"
)

// Verdict is the last line, and whether the run ended well: a head that was evicted and not
// replaced within the timeout is the failure seed 000 describes.
func (t *Timeline) Verdict(timeout time.Duration) (string, bool) {
	v := t.result(timeout)
	return v.Message, v.Passed
}

func (t *Timeline) result(timeout time.Duration) Verdict {
	v := func(passed bool, outcome, format string, a ...any) Verdict {
		return Verdict{Passed: passed, Outcome: outcome, Message: fmt.Sprintf(format, a...) + t.bystanderNote()}
	}
	down := "evicted"
	if t.endedHow != "" {
		down = "ended " + t.endedHow
	}
	switch {
	case !t.cameBack.IsZero():
		return v(true, OutcomeCameBack, "the cluster came back: head %s Running %s after the eviction", t.replacement, t.cameBack.Sub(t.evictedAt).Round(time.Second))
	case !t.evictedAt.IsZero() && t.Head && t.endedHow == "":
		return v(false, OutcomeNotReplaced, "the cluster did not come back within %s: evicted head %s was not replaced (KubeRay before v1.2.0 never replaces it; see kubectl ray doctor and kubectl ray heal)", timeout, t.Pod)
	case !t.evictedAt.IsZero() && t.Head:
		return v(false, OutcomeNotReplaced, "the cluster did not come back within %s: head %s %s and was not replaced (see kubectl ray doctor and kubectl ray heal)", timeout, t.Pod, down)
	case !t.evictedAt.IsZero() && t.endedHow == "":
		return v(true, OutcomeEvicted, "pod %s was evicted", t.Pod)
	case !t.evictedAt.IsZero():
		return v(true, OutcomePodEnded, "pod %s %s with no mark of an eviction", t.Pod, down)
	case t.ended && t.exitCode != 0:
		// The script refused (not enough free space, no shared process namespace), failed (dd, a
		// memory holder gone) or ran out of time: the pressure asked for never happened, which
		// is no result. Its last log line, which the kubelet copied into the terminated
		// message, says why.
		why := "its log says why"
		if t.exitSaid != "" {
			why = "it said: " + t.exitSaid + "; its log"
		}
		return v(false, OutcomePressureFailed, "the pressure did not run as asked: %s exited with code %d%s and pod %s is still Running; %s: kubectl logs%s %s -c %s",
			t.Container, t.exitCode, suffix(t.exitReason), t.Pod, why, nsFlag(t.Namespace), t.Pod, t.Container)
	case t.ended:
		return v(true, OutcomeNoEvictionEnded, "no eviction: %s ended and pod %s is still Running", t.Container, t.Pod)
	case !t.seen["started"]:
		return v(false, OutcomeNeverStarted, "the pressure never started: %s did not run within %s (an image that cannot be pulled? see kubectl describe pod%s %s)", t.Container, timeout, nsFlag(t.Namespace), t.Pod)
	}
	return v(true, OutcomeNoEvictionInTime, "no eviction within %s", timeout)
}

// bystanderNote names the other pods of the node the kubelet evicted, for the verdict line.
func (t *Timeline) bystanderNote() string {
	if len(t.bystanders) == 0 {
		return ""
	}
	return fmt.Sprintf("; bystanders the kubelet evicted on node %s: %s", t.Node, names(t.bystanders, 10))
}

// names lists refs, the first max of them, then how many more.
func names(refs []string, max int) string {
	if len(refs) <= max {
		return strings.Join(refs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(refs[:max], ", "), len(refs)-max)
}

func nsFlag(ns string) string {
	if ns == "" {
		return ""
	}
	return " -n " + ns
}
