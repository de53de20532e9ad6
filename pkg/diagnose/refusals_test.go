package diagnose

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server's words, as the sandbox's kube-apiserver v1.34.3 wrote them to KubeRay v1.1.1
// and v1.6.0 (ResourceQuota, LimitRange, Pod Security), and the webhook and validation shapes.
func TestRefusalCauses(t *testing.T) {
	c := &clusterView{rc: &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ml"},
		Spec: rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "small-group"}, {GroupName: "small"}}}}}
	for _, tc := range []struct {
		msg, role, group, remedy string
	}{
		{`pods "rc-worker-small-group-p6jbm" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`,
			"worker", "small-group", "the ResourceQuota q is used up"},
		{`Failed to create worker Pod for the cluster ml/rc, pods "rc-small-worker-4d6zl" is forbidden: exceeded quota: q, requested: pods=1`,
			"worker", "small", "kubectl describe resourcequota q -n ml"},
		{`pods "rc-head-6fjn4" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`, "head", "", "LimitRange"},
		{`pods "rc-head-s72g2" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`, "head", "", "Pod Security restricted:latest"},
		{`pods "rc-head-x" is forbidden: failed quota: compute: must specify limits.cpu for: ray-head`, "head", "", "counts requests or limits the pod template does not set"},
		{`admission webhook "deny.example.com" denied the request: no GPUs here`, "", "", "the admission webhook deny.example.com refuses the pod"},
		{`Pod "rc-head-abcde" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
			"head", "", "the API server rejects the pod template"},
	} {
		text := refusedPodText(tc.msg)
		if text == "" || !strings.HasSuffix(tc.msg, text) {
			t.Errorf("%q: refusal text %q", tc.msg, text)
			continue
		}
		r := refusal{text: text}.named(c)
		if r.role != tc.role || r.group != tc.group {
			t.Errorf("%q: role %q group %q, want %q %q", tc.msg, r.role, r.group, tc.role, tc.group)
		}
		if got := r.remedy(c); !strings.Contains(got, tc.remedy) {
			t.Errorf("%q: remedy %q, want %q in it", tc.msg, got, tc.remedy)
		}
	}
	// v1.1.1 reports its deletions and extra heads through the same Event reason: not refusals.
	for _, msg := range []string{"Delete 1 unhealthy worker Pods.", "2 head pods found [a b]. Please delete extra head pods",
		"The head Pod rc-head-x status is Failed which is a terminal state and it will not restart."} {
		if text := refusedPodText(msg); text != "" {
			t.Errorf("%q read as a refusal: %q", msg, text)
		}
	}
}
