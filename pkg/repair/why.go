package repair

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// restartDisabledWhy is heal's refusal on a cluster whose head restart is disabled by design.
func restartDisabledWhy(op string) string {
	if op == "" {
		op = "the operator"
	}
	return "head restart is disabled on this RayCluster by design (" + ray.AnnotationDisableProvisionedHeadRestart +
		", or a RayJob's cluster on KubeRay v1.5): " + op + " creates no new head, so heal never acts on it"
}

// operatorReplacesWhy: within the operator's grace a terminal head is the operator's to replace
// (doctor's Facts.OperatorReplacesBy); heal deleting it would only race the operator.
func operatorReplacesWhy(s *state.Snapshot, f diagnose.Finding) string {
	due := f.Facts.OperatorReplacesBy
	if due.IsZero() || !s.Now.Before(due) {
		return ""
	}
	op := f.Facts.Operator
	if op == "" {
		op = "the operator"
	}
	return op + " deletes this head and creates a new one itself; heal leaves it to the operator until " + due.UTC().Format(time.RFC3339) +
		" and acts only if it is still there then"
}

// terminalWhy says why a terminal pod of role ("head", "worker") is deleted: in a few words (the
// phase, reason and first sentence of the kubelet's message) and in full.
func terminalWhy(pod *corev1.Pod, role string) (summary, why string) {
	state := "phase " + string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		state += " (" + pod.Status.Reason + ")"
	}
	summary, why = state, state
	// The kubelet's messages are sentences ending in a period; a "; " follows them here.
	if msg := strings.TrimRight(strings.TrimSpace(firstLine(pod.Status.Message)), ". "); msg != "" {
		first, _, _ := strings.Cut(msg, ". ")
		summary += ": " + first
		why += ": " + msg
	}
	return summary, why + "; a terminal pod never runs again, whatever its restartPolicy; deleting it lets the operator create a new " + role
}

func phaseOf(pod *corev1.Pod) string {
	if pod.Status.Phase == "" {
		return "in no phase yet"
	}
	return string(pod.Status.Phase)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
