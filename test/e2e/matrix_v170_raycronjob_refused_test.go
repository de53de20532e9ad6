package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// raycronjob-refused: a RayCronJob whose template KubeRay v1.7.0 refuses (a suspended RayJob that
// keeps its cluster: ValidateRayJobSpec). The real operator records InvalidRayCronJobSpec and
// never writes the status. The test plays the history, and says so: status.lastScheduleTime five
// minutes back, as if the RayCronJob had run until then (a tick is a minute; waiting for real ones
// would cost minutes). doctor reports raycronjob-not-scheduling with the refusal and the ticks
// missed; a bundle keeps the RayCronJob whole and doctor --from finds the same. Then the spec is
// fixed and the real operator makes one RayJob per missed tick, as the remedy warns (the
// template's RayJobs are suspended: no cluster is made), and doctor is silent. About 10 s.
func matrixRayCronJobRefused(t *testing.T, h *H, v kubeRayVersion) {
	tmpl := rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", RayClusterSpec: &h.sampleCluster("x").Spec, Suspend: true}
	jt := objectMap(t, "RayJob", tmpl)
	delete(jt, "apiVersion")
	delete(jt, "kind")
	m := map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCronJob", "metadata": map[string]any{"name": "stalled"},
		"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": jt}}
	h.createJSON(mustJSON(t, m))
	h.WaitFor("the operator to refuse the RayCronJob", 60*time.Second, func() (bool, error) {
		l, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=stalled,reason=InvalidRayCronJobSpec"})
		return err == nil && len(l.Items) > 0, err
	})
	dyn, err := dynamic.NewForConfig(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	cronJobs := dyn.Resource(schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "raycronjobs"}).Namespace(h.NS)
	// Played: the RayCronJob's last run five minutes ago (the operator writes this field only).
	last := time.Now().UTC().Truncate(time.Minute).Add(-5 * time.Minute).Format(time.RFC3339)
	if _, err := cronJobs.Patch(h.Ctx, "stalled", types.MergePatchType, []byte(`{"status":{"lastScheduleTime":"`+last+`"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}

	d, res := h.doctorJSON()
	var f *drFinding
	for i := range d.Findings {
		if d.Findings[i].Rule == "raycronjob-not-scheduling" {
			f = &d.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("KubeRay %s: no raycronjob-not-scheduling\n%s", v.version, res)
	}
	wantContains(t, "message", f.Message, "RayCronJob "+h.NS+"/stalled made no RayJob for its tick at ", "its last was for the tick at "+last,
		"the operator refuses its spec: "+h.NS+"/stalled: invalid RayJob template: The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended")
	wantContains(t, "remedy", f.Remedy, "kubectl edit raycronjob stalled -n "+h.NS, "the operator makes one RayJob for each tick missed since")
	missed, _ := strconv.Atoi(f.Evidence["missedTicks"])
	if f.Severity != "error" || f.Object.Kind != "RayCronJob" || f.Object.Name != "stalled" || missed < 4 || res.Code != 1 {
		t.Errorf("finding %+v (missed ticks %d), exit %d\n%s", *f, missed, res.Code, res)
	}

	// doctor raycronjob/NAME checks that one alone; an unknown name is exit 5.
	if d, res := h.doctorJSON("raycronjob/stalled"); !slices.Contains(d.ruleIDs(), "raycronjob-not-scheduling") || res.Code != 1 {
		t.Errorf("doctor raycronjob/stalled: want raycronjob-not-scheduling, exit 1\n%s", res)
	}
	if res := h.Run("doctor", "raycronjob/absent"); res.Code != 5 || !strings.Contains(res.Stderr, `RayCronJob "absent" not found in namespace "`+h.NS+`"; list them with: kubectl get raycronjobs -n `+h.NS) {
		t.Errorf("doctor raycronjob/absent: want exit 5 naming the RayCronJob\n%s", res)
	}

	// A user with docs/rbac.md's doctor role but for the RayCronJobs: the target is unknown, not
	// missing (exit 4, the verb and resource named); the sweep still runs, with a warning.
	noCron := "nocron-" + h.NS
	role := strings.NewReplacer(`, "raycronjobs"]`, `]`, "name: kubectl-ray:doctor\n", "name: "+noCron+"\n").Replace(docRole(h, "kubectl-ray:doctor"))
	binding := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: " + noCron + "}\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: " + noCron + "}\n" +
		"subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: " + noCron + "}]\n"
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applier.Create(h.Ctx, []byte(role+"---\n"+binding), ""); err != nil {
		t.Fatal(err)
	}
	if res := h.Run("--as", noCron, "doctor", "raycronjob/stalled"); res.Code != 4 ||
		!strings.Contains(res.Stderr, `cannot check raycronjob/stalled: forbidden: you cannot list raycronjobs.ray.io`) {
		t.Errorf("doctor raycronjob/stalled without list raycronjobs: want exit 4 naming the verb and resource\n%s", res)
	}

	table := h.Run("doctor")
	wantContains(t, "doctor's table", table.Stdout, "RayCronJob "+h.NS+"/stalled: error", "raycronjob-not-scheduling", "raycronjob/stalled")
	t.Logf("$ kubectl ray doctor -n %s\n%s", h.NS, table.Stdout)

	archive := filepath.Join(t.TempDir(), "cron.tar.gz")
	if res := h.Run("bundle", "-o", archive, "--no-logs", "--ray=false"); res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	files, _ := untarBundle(t, archive)
	kept := string(files["cron/namespaces/"+h.NS+"/raycronjobs/stalled.json"])
	wantContains(t, "the bundled RayCronJob", kept, `"kind": "RayCronJob"`, `"jobTemplate":`, `"lastScheduleTime": "`+last+`"`)
	from := h.Run("doctor", "--from", archive, "-o", "json", "--kubeconfig", "/nonexistent")
	if !strings.Contains(from.Stdout, `"rule": "raycronjob-not-scheduling"`) || !strings.Contains(from.Stdout, "its last was for the tick at "+last) {
		t.Errorf("doctor --from the bundle lost the RayCronJob: %s", from)
	}

	// bundle raycronjob/NAME: that RayCronJob, and doctor --from checks it again.
	one := filepath.Join(t.TempDir(), "stalled.tar.gz")
	if res := h.Run("bundle", "raycronjob/stalled", "-o", one, "--no-logs", "--ray=false"); res.Code != 0 {
		t.Fatalf("bundle raycronjob/stalled: %s", res)
	}
	if files, names := untarBundle(t, one); !strings.Contains(string(files["stalled/namespaces/"+h.NS+"/raycronjobs/stalled.json"]), `"kind": "RayCronJob"`) {
		t.Errorf("bundle raycronjob/stalled: no RayCronJob in it: %v", names)
	}
	if from := h.Run("doctor", "--from", one, "-o", "json", "--kubeconfig", "/nonexistent"); !strings.Contains(from.Stdout, `"rule": "raycronjob-not-scheduling"`) ||
		!strings.Contains(from.Stdout, `"target": "RayCronJob/stalled"`) {
		t.Errorf("doctor --from the RayCronJob's bundle: %s", from)
	}

	// The fix: the real operator catches up, one RayJob per tick missed.
	if _, err := cronJobs.Patch(h.Ctx, "stalled", types.MergePatchType, []byte(`{"spec":{"jobTemplate":{"shutdownAfterJobFinishes":true}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var made int
	h.WaitFor(fmt.Sprintf("the operator to make a RayJob for each of the %d ticks missed", missed), 60*time.Second, func() (bool, error) {
		l, err := h.Ray.RayV1().RayJobs(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "ray.io/cronjob-name=stalled"})
		if err != nil {
			return false, err
		}
		made = len(l.Items)
		return made >= missed, nil
	})
	if d, res := h.doctorJSON(); slices.Contains(d.ruleIDs(), "raycronjob-not-scheduling") {
		t.Errorf("doctor after the fix (%d RayJobs made): still raycronjob-not-scheduling\n%s", made, res)
	}
	// Stop the ticks: what follows is the operator's ordinary work.
	if _, err := cronJobs.Patch(h.Ctx, "stalled", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
