package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// doctor -f against the sandbox predicts, in the API server's and the scheduler's own words, what
// applying the file would do (issue 31, kuberay #736): the namespace's ResourceQuota refuses the
// head of "shop" (head-admission-refused), and no node matches the head selector of "pinned"
// (head-fits-no-node), and once pinned's head counts against the quota its worker is refused
// (workers-admission-refused). Then the file is applied with kubectl, and the real operator's
// Warning Events (but for what the quota has used by then, for shop) and the real scheduler's
// FailedScheduling Event say what doctor said. Costs about 10 s.
func TestDoctorManifestAdmission(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.quota("team-memory", corev1.ResourceRequestsMemory, resource.MustParse("1Gi"))

	// shop: the sample as it is, its head asking 2G of memory. pinned: a head of 512Mi, admitted,
	// but selecting nodes of a pool this cluster has none of.
	shop := h.sampleCluster("shop")
	pinned := h.sampleCluster("pinned")
	head := &pinned.Spec.HeadGroupSpec.Template.Spec
	head.NodeSelector = map[string]string{"pool": "gpu-a100"}
	for _, l := range []corev1.ResourceList{head.Containers[0].Resources.Requests, head.Containers[0].Resources.Limits} {
		l[corev1.ResourceMemory] = resource.MustParse("512Mi")
	}
	file := manifestFile(t, "clusters", shop, pinned) // the sample carries its apiVersion and kind

	res := h.Run("doctor", "-f", file, "-o", "json")
	if res.Code != 1 {
		t.Fatalf("doctor -f of a head the quota refuses: want exit 1, got %s", res)
	}
	var d struct {
		Findings []struct {
			Rule, Field string
			Cluster     *struct{ Name string }
			Evidence    map[string]string
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, f := range d.Findings {
		if strings.HasPrefix(f.Rule, "head-admission") || f.Rule == "head-fits-no-node" || f.Rule == "workers-admission-refused" {
			got[f.Cluster.Name+" "+f.Rule+" "+f.Field] = f.Evidence
		}
	}
	refused := got["shop head-admission-refused spec.headGroupSpec.template.spec.containers[0].resources"]
	unplaced := got["pinned head-fits-no-node spec.headGroupSpec.template.spec.nodeSelector"]
	workers := got["pinned workers-admission-refused spec.workerGroupSpecs[0].template.spec.containers[0].resources"]
	if len(got) != 3 || refused == nil || unplaced == nil || workers == nil {
		t.Fatalf("doctor -f: want shop's head refused by the quota, pinned's head placed on no node and its worker refused once the head counts, and nothing else; got %v\n%s", got, res)
	}
	// pinned's head (512Mi) is admitted, Pending or not, and counts; its worker (1G, its
	// wait-gcs-ready 256Mi under that) is then refused, and shop's head never counted.
	wantWorkers := "exceeded quota: team-memory, requested: requests.memory=1G, used: requests.memory=512Mi, limited: requests.memory=1Gi"
	if workers["refusals"] != wantWorkers || workers["admitted"] != "0" || workers["desired"] != "1" {
		t.Errorf("pinned's predicted worker refusal: %v, want %q of 0 admitted, 1 desired", workers, wantWorkers)
	}
	wantRefusal := "exceeded quota: team-memory, requested: requests.memory=2G, used: requests.memory=0, limited: requests.memory=1Gi"
	if refused["refusals"] != wantRefusal {
		t.Errorf("shop's predicted refusal: %q, want %q", refused["refusals"], wantRefusal)
	}

	// Applied, through kubectl: the RayClusters are accepted; the operator's create of shop's head
	// is refused in the words doctor used, and the scheduler places pinned's head nowhere, saying
	// why as doctor did.
	if apply := h.Kubectl("create", "-n", h.NS, "-f", file); apply.Code != 0 {
		t.Fatalf("kubectl create -f: %s", apply)
	}
	h.WaitFor("the operator's refused create of shop's head", 90*time.Second, func() (bool, error) {
		evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=shop,type=Warning"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			// What the quota has used depends on whether pinned's head was admitted first.
			if strings.Contains(ev.Message, "is forbidden: exceeded quota: team-memory, requested: requests.memory=2G, used: requests.memory=") &&
				strings.HasSuffix(ev.Message, ", limited: requests.memory=1Gi") {
				return true, nil
			}
		}
		return false, nil
	})
	h.WaitFor("the operator's refused create of pinned's worker, in doctor's words", 90*time.Second, func() (bool, error) {
		for _, m := range h.warningMessages("pinned", "PodReconciliationError") {
			if strings.HasPrefix(m, `pods "pinned-worker-small-group-`) && strings.HasSuffix(m, `" is forbidden: `+wantWorkers) {
				return true, nil
			}
		}
		return false, nil
	})
	if heads := h.Pods("shop", "head"); len(heads) != 0 {
		t.Errorf("shop has a head pod %s, yet its quota refuses it", heads[0].Name)
	}
	// The counts are of the nodes there are at each moment: tests running beside this one add
	// nodes of their own to the shared sandbox (worker-kill's, tainted), so the scheduler's Event
	// is held to doctor's reason for the sandbox's nodes, not to its totals.
	const selector = "node(s) didn't match Pod's node affinity/selector"
	if !strings.HasPrefix(unplaced["nodes"], "0/") || !strings.Contains(unplaced["nodes"], selector) {
		t.Fatalf("pinned's predicted placement: %q", unplaced["nodes"])
	}
	h.WaitFor("the scheduler's FailedScheduling of pinned's head", 90*time.Second, func() (bool, error) {
		for _, p := range h.Pods("pinned", "head") {
			for _, m := range h.podEvents(p.Name, "FailedScheduling") {
				// "default-scheduler: 0/3 nodes are available: 3 node(s) didn't match ... ."
				if strings.Contains(m, ": 0/") && strings.Contains(m, " "+selector) {
					return true, nil
				}
			}
		}
		return false, nil
	})

	// The same file again, now that both exist (exists-in-cluster): an apply changes them in
	// place and creates no pod, so nothing is judged again as new. pinned's head now fills half
	// the quota: judged as new it would be refused, a false alarm. About 0.3 s.
	again := h.Run("doctor", "-f", file, "-o", "json", "--fail-on", "never")
	var d2 struct {
		Findings []struct {
			Rule    string
			Cluster *struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(again.Stdout), &d2); err != nil || again.Code != 0 {
		t.Fatalf("doctor -f of applied documents: %v\n%s", err, again)
	}
	exists := map[string]bool{}
	for _, f := range d2.Findings {
		switch f.Rule {
		case "exists-in-cluster":
			exists[f.Cluster.Name] = true
		case "head-admission-refused", "workers-admission-refused", "head-fits-no-node":
			t.Errorf("doctor -f of applied documents judged %s as new: %s", f.Cluster.Name, f.Rule)
		}
	}
	if !exists["shop"] || !exists["pinned"] {
		t.Errorf("doctor -f of applied documents: exists-in-cluster for %v, want shop and pinned\n%s", exists, again)
	}
}
