package diagnose

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// The findings of the rules for the failures KubeRay's tracker shows today (kuberay #4272, #2735,
// #1141, #3592): what a person acts on, checked like TestFindingDetails.
func TestTrackerRulesFindingDetails(t *testing.T) {
	checkDetails(t, []detailCase{
		{"head-starved-by-workers", RuleHeadStarvedByWorkers, "Pod ml/raycluster-a-head-new01",
			[]string{"head pod raycluster-a-head-new01 is Pending for 10m: Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.",
				"1 worker(s) of this cluster are scheduled (on node-2)", "kuberay #3592", "priorityClassName", "gang scheduling"},
			map[string]string{"scheduledWorkers": "1", "workerNodes": "node-2", "reason": "Unschedulable"}},
		{"head-pending-selector-with-workers", RuleHeadPending, "Pod ml/raycluster-a-head-abcde",
			[]string{"didn't match Pod's node affinity/selector"}, nil},
		{"worker-init-oom", RuleWorkerInitFailing, "Pod ml/raycluster-a-worker-small-xyz12",
			[]string{"1 worker(s) never start: init container wait-gcs-ready of worker raycluster-a-worker-small-xyz12 is CrashLoopBackOff (6 restarts), last exit 137 (OOMKilled)",
				"fixed 256Mi limit", "ENABLE_INIT_CONTAINER_INJECTION=false", "kubectl logs raycluster-a-worker-small-xyz12 -n ml -c wait-gcs-ready --previous"},
			map[string]string{"container": "wait-gcs-ready", "reason": "CrashLoopBackOff", "restarts": "6", "lastState": "OOMKilled", "exitCode": "137"}},
		{"head-recreate-loop", RuleHeadRecreateLoop, "Pod ml/raycluster-a-head-abcde",
			[]string{"the head of RayCluster ml/raycluster-a was deleted and recreated 3 times in the last 5m50s (3 by the operator, 0 by heal)",
				"last exit 1 (Error)", "current head raycluster-a-head-abcde is 40s old, Running, not Ready", "kuberay #4272",
				"--field-selector involvedObject.name=raycluster-a", "heal` backs off"},
			map[string]string{"deletions": "3", "window": "5m50s", "byOperator": "3", "byHeal": "0",
				"lastExitCode": "1", "lastReason": "Error", "head": "raycluster-a-head-abcde", "headAge": "40s"}},
		{"head-recreate-loop-v111", RuleHeadRecreateLoop, "Pod ml/raycluster-a-head-abcde",
			[]string{"recreated 3 times in the last 5m50s", "last exit 1 (Error)"}, map[string]string{"deletions": "3"}},
		{"workers-stale", RuleWorkersStale, "RayCluster ml/raycluster-a",
			[]string{"1 worker(s) started before head raycluster-a-head-new01 (started 19m ago, Ready 19m ago) and have not restarted since",
				"kuberay #1141", "kubectl ray heal raycluster-a -n ml --stale-workers"},
			map[string]string{"workers": "raycluster-a-worker-small-xyz12", "stale": "1", "oldestWorkerStarted": "178m ago"}},
		{"rayservice-upgrade-apps-stuck", RuleRayServiceUpgradeStuck, "RayService ml/svc",
			[]string{"RayService ml/svc has been upgrading for 40m", "but its pending RayCluster svc-raycluster-n3w45 has a Ready head, " +
				"but its Serve applications are not running: math_app DEPLOYING (Deploying app 'math_app'.); traffic stays on the active cluster svc-raycluster-q7x9z",
				"read why the Serve applications do not start on RayCluster svc-raycluster-n3w45"},
			map[string]string{"pendingApps": "has a Ready head, but its Serve applications are not running: math_app DEPLOYING (Deploying app 'math_app'.)"}},
	})
}

// trackerRules are the rules this file's cases cover; none may fire on a healthy cluster.
var trackerRules = []string{RuleHeadStarvedByWorkers, RuleWorkerInitFailing, RuleHeadRecreateLoop, RuleWorkersStale}

// Zero false alarms: the healthy fixture (also with its trimmed twin) yields none of them.
func TestTrackerRulesRulesSilentOnHealthy(t *testing.T) {
	f := loadFixture(t, "healthy")
	for _, s := range []*state.Snapshot{&f.snap, state.Trimmed(&f.snap)} {
		r := Diagnose(s, DefaultOptions())
		for _, fd := range r.Findings {
			for _, id := range trackerRules {
				if fd.Rule == id {
					t.Errorf("healthy fixture: %s fired: %s", id, fd.Message)
				}
			}
		}
	}
}

// The operator quotes the Ray container's terminated state in its Events, message and all: a
// Redis URI with a password there is never printed, and the redactor covers Event text.
func TestRecreateLoopPrintsNoSecret(t *testing.T) {
	f := loadFixture(t, "head-recreate-loop")
	r := Diagnose(&f.snap, DefaultOptions())
	for _, fd := range r.Findings {
		text := fd.Message + fd.Remedy
		for _, v := range fd.Evidence {
			text += v
		}
		if strings.Contains(text, "s3cr3t-pw") {
			t.Errorf("%s prints the password: %s", fd.Rule, text)
		}
	}
	redact := state.Redactor(&f.snap).String
	for _, ev := range f.snap.Events {
		if m := redact(ev.Message); strings.Contains(m, "s3cr3t-pw") {
			t.Errorf("redactor leaves the password in %q", m)
		}
	}
}

// Events are trimmed and filtered as they arrive: only head lifecycle Events are kept, and the
// trimmed copy gives the same findings.
func TestKeepEventAndTrim(t *testing.T) {
	f := loadFixture(t, "head-recreate-loop")
	want := got(Diagnose(&f.snap, DefaultOptions()))
	var kept []corev1.Event
	for _, ev := range f.snap.Events {
		ev.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
		if KeepEvent(&ev) {
			state.TrimEvent(&ev)
			kept = append(kept, ev)
		}
	}
	other := []corev1.Event{
		{Reason: "CreatedWorkerPod", Message: "Created worker Pod ml/w1", InvolvedObject: corev1.ObjectReference{Kind: "RayCluster"}},
		{Reason: "Created", Message: "Created service ml/raycluster-a-head-svc", InvolvedObject: corev1.ObjectReference{Kind: "RayCluster"}},
		{Reason: "Deleted", Message: "Deleted pod ml/w1", InvolvedObject: corev1.ObjectReference{Kind: "RayCluster"}},
		{Reason: "CreatedHeadPod", Message: "Created head Pod ml/h1", InvolvedObject: corev1.ObjectReference{Kind: "RayCluster"}},
		// v1.1.1 reports deletions under the reason it uses for refusals too: not a refusal.
		{Type: "Warning", Reason: "PodReconciliationError", Message: "Delete 1 unhealthy worker Pods.", InvolvedObject: corev1.ObjectReference{Kind: "RayCluster"}},
	}
	for _, ev := range []corev1.Event{
		{Type: "Warning", Reason: "FailedToCreateWorkerPod", Message: `Failed to create worker Pod for the cluster ml/rc, pods "rc-small-worker-x" is forbidden: exceeded quota: q`},
		{Type: "Warning", Reason: "PodReconciliationError", Message: `pods "rc-worker-small-x" is forbidden: exceeded quota: q`},
	} {
		if !KeepEvent(&ev) {
			t.Errorf("dropped the refusal %s %q", ev.Reason, ev.Message)
		}
	}
	for i := range other {
		if KeepEvent(&other[i]) {
			t.Errorf("kept %s %q", other[i].Reason, other[i].Message)
		}
	}
	if len(kept) != 3 {
		t.Fatalf("kept %d events, want the 3 head deletions", len(kept))
	}
	f.snap.Events = kept
	if g := got(Diagnose(&f.snap, DefaultOptions())); !slices.Equal(g, want) {
		t.Fatalf("trimmed events: %q, want %q", g, want)
	}
}
