package repair

import (
	"encoding/json"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func TestPlanEvictedHead(t *testing.T) {
	c := cluster("default", "raycluster-kuberay")
	p := evicted(head(c, "raycluster-kuberay-head-ldg9f"))
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}}
	// head-evicted and head-terminated both fire on an evicted head: one delete, named by the
	// more specific rule.
	got := Plan(s, []diagnose.Finding{
		finding(diagnose.RuleHeadTerminated, c, &p),
		finding(diagnose.RuleHeadEvicted, c, &p),
	}, Options{})
	want := `{"actions":[{"rule":"head-evicted","cluster":{"kind":"RayCluster","namespace":"default","name":"raycluster-kuberay","uid":"uid-raycluster-kuberay"},"pod":{"kind":"Pod","namespace":"default","name":"raycluster-kuberay-head-ldg9f","uid":"uid-raycluster-kuberay-head-ldg9f"},"resourceVersion":"100","node":"node-a","why":"phase Failed (Evicted): The node was low on resource: memory. Threshold quantity: 1Gi, available: 991045Ki; a terminal pod never runs again, whatever its restartPolicy; deleting it lets the operator create a new head"}],"notHealable":null}`
	assertJSON(t, got, want)
}

func TestPlanTerminatedAnyRestartPolicy(t *testing.T) {
	c := cluster("ns", "rc")
	for _, rp := range []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever} {
		for _, phase := range []corev1.PodPhase{corev1.PodFailed, corev1.PodSucceeded} {
			p := head(c, "rc-head-x")
			p.Spec.RestartPolicy = rp
			p.Status.Phase = phase
			got := Plan(&state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}},
				[]diagnose.Finding{finding(diagnose.RuleHeadTerminated, c, &p)}, Options{})
			if len(got.Actions) != 1 || got.Actions[0].Pod.Name != "rc-head-x" || got.Actions[0].GracePeriodSeconds != nil {
				t.Errorf("%s/%s: want one graceful delete of rc-head-x, got %+v", rp, phase, got)
			}
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	c := cluster("ns", "rc")
	other := cluster("ns", "other")
	suspended := cluster("ns", "rc")
	yes := true
	suspended.Spec.Suspend = &yes

	running := head(c, "rc-head-run")
	notRay := evicted(head(c, "rc-head-noray"))
	delete(notRay.Labels, ray.LabelIsRayNode)
	foreign := evicted(head(c, "rc-head-foreign"))
	foreign.OwnerReferences[0].UID = "someone-else"
	worker := evicted(head(c, "rc-worker"))
	worker.Labels[ray.LabelNodeType] = ray.NodeTypeWorker
	replaced := evicted(head(c, "rc-head-replaced"))
	staleFinding := finding(diagnose.RuleHeadEvicted, c, &replaced)
	staleFinding.Object.UID = "older-uid"
	otherLabel := evicted(head(c, "rc-head-label"))
	otherLabel.Labels[ray.LabelCluster] = other.Name

	cases := []struct {
		name     string
		clusters []rayv1.RayCluster
		pod      corev1.Pod
		f        diagnose.Finding
		why      string
	}{
		{"running", []rayv1.RayCluster{c}, running, finding(diagnose.RuleHeadEvicted, c, &running),
			"the pod is Running, not terminal; heal never deletes a pod that may be running"},
		{"not a ray pod", []rayv1.RayCluster{c}, notRay, finding(diagnose.RuleHeadEvicted, c, &notRay),
			"not a Ray pod (no label ray.io/is-ray-node=yes)"},
		{"not owned", []rayv1.RayCluster{c}, foreign, finding(diagnose.RuleHeadEvicted, c, &foreign),
			"not controlled by RayCluster ns/rc; only the operator's own pods are replaced by it"},
		{"worker", []rayv1.RayCluster{c}, worker, finding(diagnose.RuleHeadTerminated, c, &worker),
			"not a Ray head pod"},
		{"cluster gone", nil, evicted(head(c, "rc-head-orphan")), diagnose.Finding{},
			"its RayCluster was not found; without it no operator would create a replacement"},
		{"finding names no pod", []rayv1.RayCluster{c}, evicted(head(c, "rc-head-x")), finding(diagnose.RuleHeadEvicted, c, nil),
			"the finding names a RayCluster, not a pod"},
		{"suspended", []rayv1.RayCluster{suspended}, evicted(head(suspended, "rc-head-s")), diagnose.Finding{},
			"its RayCluster is suspended; the operator would not create a new head"},
		{"replaced since the finding", []rayv1.RayCluster{c}, replaced, staleFinding,
			"the pod was replaced since the finding was made"},
		{"label names another cluster", []rayv1.RayCluster{c, other}, otherLabel, finding(diagnose.RuleHeadEvicted, c, &otherLabel),
			"its RayCluster was not found; without it no operator would create a replacement"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			if f.Rule == "" {
				f = finding(diagnose.RuleHeadEvicted, c, &tc.pod)
			}
			got := Plan(&state.Snapshot{Clusters: tc.clusters, Pods: []corev1.Pod{tc.pod}}, []diagnose.Finding{f}, Options{Force: true})
			if len(got.Actions) != 0 {
				t.Fatalf("want no action, got %+v", got.Actions)
			}
			if len(got.NotHealable) != 1 || got.NotHealable[0].Why != tc.why {
				t.Fatalf("want not healable %q, got %+v", tc.why, got.NotHealable)
			}
		})
	}
}

func TestPlanNotHealableRules(t *testing.T) {
	c := cluster("ns", "rc")
	p := head(c, "rc-head-a")
	p.Status.Phase = corev1.PodPending
	got := Plan(&state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}}, []diagnose.Finding{
		finding(diagnose.RuleHeadPending, c, &p),
		finding(diagnose.RuleHeadCrashLoop, c, &p),
		finding(diagnose.RuleHeadMissing, c, nil),
		finding(diagnose.RuleGCSFTOff, c, nil),
	}, Options{})
	want := `{"actions":null,"notHealable":[` +
		`{"rule":"head-missing","cluster":{"kind":"RayCluster","namespace":"ns","name":"rc","uid":"uid-rc"},"object":{"kind":"RayCluster","namespace":"ns","name":"rc","uid":"uid-rc"},"why":"there is no head pod to delete; creating heads is the operator's job: check that the KubeRay operator is running"},` +
		`{"rule":"head-crashloop","cluster":{"kind":"RayCluster","namespace":"ns","name":"rc","uid":"uid-rc"},"object":{"kind":"Pod","namespace":"ns","name":"rc-head-a","uid":"uid-rc-head-a"},"why":"the head's containers keep failing; a new pod would run the same spec and fail the same way: fix the image, command, memory or probes"},` +
		`{"rule":"head-pending","cluster":{"kind":"RayCluster","namespace":"ns","name":"rc","uid":"uid-rc"},"object":{"kind":"Pod","namespace":"ns","name":"rc-head-a","uid":"uid-rc-head-a"},"why":"the head is Pending; a new pod would get the same spec and wait the same way: fix its resources, node selector, affinity or tolerations"}]}`
	assertJSON(t, got, want)
}

func TestPlanStuckTerminating(t *testing.T) {
	c := cluster("ns", "rc")
	cases := []struct {
		name   string
		nodes  []corev1.Node
		blind  bool
		force  bool
		action bool
		why    string
	}{
		{"no force", []corev1.Node{node("n1", corev1.ConditionFalse)}, false, false, false,
			"stuck Terminating on node n1, which is NotReady; pass --force to force-delete it (grace period 0) once you know the node is down"},
		{"force, node ready", []corev1.Node{node("n1", corev1.ConditionTrue)}, false, true, false,
			"being deleted on node n1, which is Ready: the kubelet will finish the deletion; heal force-deletes only on a NotReady, unreachable or gone node"},
		{"force, nodes unreadable", nil, true, true, false,
			"stuck Terminating on node n1, but nodes could not be read, so heal cannot tell whether the node is down"},
		{"force, node NotReady", []corev1.Node{node("n1", corev1.ConditionFalse)}, false, true, true,
			"stuck Terminating since 2024-05-08T06:55:30Z on node n1, which is NotReady; the operator counts it as the head until it is gone"},
		{"force, node unknown", []corev1.Node{node("n1", corev1.ConditionUnknown)}, false, true, true,
			"stuck Terminating since 2024-05-08T06:55:30Z on node n1, which is unreachable; the operator counts it as the head until it is gone"},
		{"force, node without a Ready condition", []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, false, true, false,
			"being deleted on node n1, which reports no Ready condition yet, so nothing shows it is down; heal force-deletes only on a NotReady, unreachable or gone node"},
		{"force, node gone", []corev1.Node{node("n2", corev1.ConditionTrue)}, false, true, true,
			"stuck Terminating since 2024-05-08T06:55:30Z on node n1, which is gone; the operator counts it as the head until it is gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The kubelet on a dead node never reports, so the stuck pod still reads Running.
			p := terminating(head(c, "rc-head-a"), "n1")
			s := &state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}, Nodes: tc.nodes}
			if tc.blind {
				s.Blind = []state.Gap{{Resource: "nodes", Reason: "forbidden"}}
			}
			got := Plan(s, []diagnose.Finding{finding(diagnose.RuleHeadTerminatingStuck, c, &p)}, Options{Force: tc.force, Name: asFlag})
			if got.Stuck != 1 {
				t.Errorf("Stuck = %d, want 1", got.Stuck)
			}
			if !tc.action {
				if len(got.Actions) != 0 || len(got.NotHealable) != 1 || got.NotHealable[0].Why != tc.why {
					t.Fatalf("want only not healable %q, got %+v", tc.why, got)
				}
				return
			}
			if len(got.Actions) != 1 || !got.Actions[0].Force() || got.Actions[0].Why != tc.why {
				t.Fatalf("want one force delete with why %q, got %+v", tc.why, got)
			}
		})
	}
}

func TestPlanDuplicateDeletesOnlyTheTerminalHead(t *testing.T) {
	c := cluster("ns", "rc")
	live := head(c, "rc-head-new")
	old := evicted(head(c, "rc-head-old"))
	s := &state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{live, old}}
	// Doctor names the extra head.
	got := Plan(s, []diagnose.Finding{finding(diagnose.RuleHeadDuplicate, c, &old)}, Options{})
	if len(got.Actions) != 1 || got.Actions[0].Pod.Name != "rc-head-old" || got.Actions[0].Rule != diagnose.RuleHeadDuplicate {
		t.Fatalf("want the old head deleted, got %+v", got)
	}
	// A finding on the cluster covers its terminal heads, never the live one.
	got = Plan(s, []diagnose.Finding{finding(diagnose.RuleHeadDuplicate, c, nil)}, Options{})
	if len(got.Actions) != 1 || got.Actions[0].Pod.Name != "rc-head-old" {
		t.Fatalf("want the old head deleted, got %+v", got)
	}

	// Two live heads: nothing a delete may do.
	twin := head(c, "rc-head-twin")
	s = &state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{live, twin}}
	got = Plan(s, []diagnose.Finding{finding(diagnose.RuleHeadDuplicate, c, &twin)}, Options{Force: true})
	if len(got.Actions) != 0 || len(got.NotHealable) != 1 || got.NotHealable[0].Object.Name != "rc-head-twin" ||
		got.NotHealable[0].Why != "the extra head is live; heal deletes only terminal heads, never one that may be running" {
		t.Fatalf("want not healable, got %+v", got)
	}
}

func assertJSON(t *testing.T, v any, want string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}

// A terminal head's status message can quote a password (a command line, a Redis URI): the plan's
// reasons are printed, logged and stored in Events, so they are redacted as doctor's are.
// The plan line and the Events say the evidence in a few words; the JSON why has all of it, with
// no stray period before the "; " (kubelet messages end in one).
func TestPlanSummary(t *testing.T) {
	c := cluster("ml", "rc")
	p := evicted(head(c, "rc-head"))
	p.Status.Message = "The node was low on resource: ephemeral-storage. Threshold quantity: 10%, available: 2%. Container ray-head was using 12Gi. "
	plan := Plan(&state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}},
		[]diagnose.Finding{finding(diagnose.RuleHeadEvicted, c, &p)}, Options{})
	if len(plan.Actions) != 1 {
		t.Fatalf("plan = %+v", plan)
	}
	a := plan.Actions[0]
	if want := "phase Failed (Evicted): The node was low on resource: ephemeral-storage"; a.Summary != want {
		t.Errorf("summary %q, want %q", a.Summary, want)
	}
	if want := "phase Failed (Evicted): The node was low on resource: ephemeral-storage. Threshold quantity: 10%, available: 2%. " +
		"Container ray-head was using 12Gi; a terminal pod never runs again, whatever its restartPolicy; deleting it lets the operator create a new head"; a.Why != want {
		t.Errorf("why %q, want %q", a.Why, want)
	}
	ev := HealEvents(a, t0, false)[0]
	if want := "kubectl-ray heal deleted head pod rc-head (uid " + a.Pod.UID + ") for rule head-evicted: " + a.Summary; ev.Message != want {
		t.Errorf("event %q, want %q", ev.Message, want)
	}
}

func TestPlanRedactsSecretsInReasons(t *testing.T) {
	c := cluster("ml", "rc")
	p := evicted(head(c, "rc-head"))
	p.Spec.Containers = []corev1.Container{{Name: "ray-head", Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "hunter2secret"}}}}
	p.Status.Message = "ray start exited: redis://:hunter2secret@redis:6379 and redis://u:0therPass@x:1 refused"
	for _, s := range []*state.Snapshot{
		{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}},
		state.Trimmed(&state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}}),
	} {
		plan := Plan(s, []diagnose.Finding{finding(diagnose.RuleHeadEvicted, c, &p)}, Options{})
		if len(plan.Actions) != 1 {
			t.Fatalf("plan = %+v", plan)
		}
		for _, why := range []string{plan.Actions[0].Why, plan.Actions[0].Summary} {
			if strings.Contains(why, "hunter2secret") || strings.Contains(why, "0therPass") || !strings.Contains(why, redact.Redacted) {
				t.Errorf("why = %q, want both passwords redacted", why)
			}
		}
	}
}

// asFlag shows a setting as the heal command does; without it, a why names the bare setting.
func asFlag(f fault.Field) string { return "--" + string(f) }

func TestWhyNamesSettingsAsTheCommandShowsThem(t *testing.T) {
	if got := (Options{}).name(SetForce); got != "force" {
		t.Errorf("no Name: %q, want the bare setting", got)
	}
	if got := (Options{Name: asFlag}).name(SetStaleWorkers); got != "--stale-workers" {
		t.Errorf("Name: %q", got)
	}
}
