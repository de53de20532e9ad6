package diagnose

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func admissionCluster(res corev1.ResourceRequirements, autoscale bool) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ml"}}
	rc.Spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Resources: res}}
	if autoscale {
		rc.Spec.EnableInTreeAutoscaling = &autoscale
	}
	return rc
}

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// The head pod counts KubeRay's autoscaler sidecar, and requests default to limits.
func TestHeadPodOf(t *testing.T) {
	p := headPodOf(admissionCluster(corev1.ResourceRequirements{Limits: list("cpu", "1", "memory", "2Gi")}, true))
	if got := podAsks(p); got != "cpu=1500m, memory=2560Mi" {
		t.Fatalf("asks %s, want the Ray container's limits as requests plus the autoscaler's 500m and 512Mi", got)
	}
	rc := admissionCluster(corev1.ResourceRequirements{Requests: list("cpu", "1")}, true)
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Resources: &corev1.ResourceRequirements{Requests: list("cpu", "100m")}}
	if got := podAsks(headPodOf(rc)); got != "cpu=1100m" {
		t.Fatalf("asks %s, want autoscalerOptions.resources in place of the sidecar's defaults", got)
	}
}

func TestQuotaAndLimitRangeRefusals(t *testing.T) {
	quota := func(hard, used corev1.ResourceList) corev1.ResourceQuota {
		return corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ml"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Used: used}}
	}
	withDefaults := corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ml"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: list("memory", "1Gi", "cpu", "1"), Max: list("memory", "4Gi")}}}}
	other := withDefaults
	other.Namespace = "elsewhere"
	for _, tc := range []struct {
		name   string
		res    corev1.ResourceRequirements
		quotas []corev1.ResourceQuota
		ranges []corev1.LimitRange
		want   string // "" for admitted
	}{
		{"room left", corev1.ResourceRequirements{Requests: list("memory", "2Gi")}, []corev1.ResourceQuota{quota(list("requests.memory", "4Gi"), list("requests.memory", "2Gi"))}, nil, ""},
		{"exceeded", corev1.ResourceRequirements{Requests: list("memory", "2Gi")}, []corev1.ResourceQuota{quota(list("requests.memory", "4Gi"), list("requests.memory", "3Gi"))}, nil,
			"exceeded quota: q, requested: requests.memory=2Gi, used: requests.memory=3Gi, limited: requests.memory=4Gi"},
		{"pods", corev1.ResourceRequirements{}, []corev1.ResourceQuota{quota(list("pods", "2"), list("pods", "2"))}, nil, "requested: pods=1"},
		{"gpus", corev1.ResourceRequirements{Limits: list("nvidia.com/gpu", "1")}, []corev1.ResourceQuota{quota(list("requests.nvidia.com/gpu", "0"), nil)}, nil, "requests.nvidia.com/gpu=1"},
		{"must specify", corev1.ResourceRequirements{Requests: list("cpu", "1")}, []corev1.ResourceQuota{quota(list("limits.cpu", "10", "memory", "10Gi"), nil)}, nil,
			"failed quota: q: must specify limits.cpu for: ray-head; memory for: ray-head"},
		{"a LimitRange's defaults satisfy it", corev1.ResourceRequirements{}, []corev1.ResourceQuota{quota(list("limits.cpu", "10", "limits.memory", "10Gi"), nil)}, []corev1.LimitRange{withDefaults}, ""},
		{"another namespace's LimitRange does not", corev1.ResourceRequirements{}, []corev1.ResourceQuota{quota(list("limits.memory", "10Gi"), nil)}, []corev1.LimitRange{other}, "must specify limits.memory"},
		{"above a LimitRange's max", corev1.ResourceRequirements{Limits: list("memory", "8Gi")}, nil, []corev1.LimitRange{withDefaults},
			"LimitRange lr: maximum memory usage per Container is 4Gi, but container ray-head's limit is 8Gi"},
		{"a scoped quota is not judged", corev1.ResourceRequirements{}, []corev1.ResourceQuota{func() corev1.ResourceQuota {
			q := quota(list("pods", "0"), nil)
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
			return q
		}()}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := headPodOf(admissionCluster(tc.res, false))
			limitRangeDefaults(p, tc.ranges)
			got := strings.Join(append(limitRangeRefusals(p, tc.ranges), quotaRefusals(p, tc.quotas, nil)...), "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("refusals %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNodeFit(t *testing.T) {
	node := func(name string, alloc corev1.ResourceList, mutate func(*corev1.Node)) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "cpu"}}, Status: corev1.NodeStatus{Allocatable: alloc}}
		if mutate != nil {
			mutate(&n)
		}
		return n
	}
	big := list("cpu", "8", "memory", "32Gi")
	tainted := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}
	head := func(mutate func(*corev1.PodSpec)) *corev1.Pod {
		p := headPodOf(admissionCluster(corev1.ResourceRequirements{Requests: list("cpu", "2", "memory", "8Gi")}, false))
		if mutate != nil {
			mutate(&p.Spec)
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		nodes []corev1.Node
		want  string // "" when it fits
	}{
		{"fits", head(nil), []corev1.Node{node("a", big, nil)}, ""},
		{"too small", head(nil), []corev1.Node{node("a", list("cpu", "1", "memory", "32Gi"), nil), node("b", list("cpu", "8", "memory", "4Gi"), nil)},
			"0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory"},
		{"taint", head(nil), []corev1.Node{node("a", big, tainted)}, "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}"},
		{"taint tolerated", head(func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}), []corev1.Node{node("a", big, tainted)}, ""},
		// Kubernetes 1.35's comparison operators (alpha gate TaintTolerationComparisonOperators):
		// a numeric taint value tolerated when it is greater than the toleration's.
		{"taint tolerated by Gt", head(func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "tier", Operator: corev1.TolerationOpGt, Value: "2"}}
		}), []corev1.Node{node("a", big, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "tier", Value: "3", Effect: corev1.TaintEffectNoSchedule}}
		})}, ""},
		{"taint not tolerated by Gt", head(func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "tier", Operator: corev1.TolerationOpGt, Value: "3"}}
		}), []corev1.Node{node("a", big, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "tier", Value: "3", Effect: corev1.TaintEffectNoSchedule}}
		})}, "1 node(s) had untolerated taint {tier: 3}"},
		{"cordoned", head(nil), []corev1.Node{node("a", big, func(n *corev1.Node) { n.Spec.Unschedulable = true })}, "node.kubernetes.io/unschedulable"},
		{"selector", head(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "gpu"} }), []corev1.Node{node("a", big, nil)},
			"1 node(s) didn't match Pod's node affinity/selector"},
		{"no nodes", head(nil), nil, "0/0 nodes are available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := nodeFit(tc.pod, tc.nodes)
			if ok != (tc.want == "") || !strings.Contains(why, tc.want) {
				t.Fatalf("fit %v %q, want %q", ok, why, tc.want)
			}
		})
	}
}

// workers-admission-refused follows KubeRay's creates in order, each admitted pod charged to the
// quota, and words the refusal as the quota admission plugin does at that moment.
func TestWorkersAdmissionWords(t *testing.T) {
	f := loadFixture(t, "workers-admission-refused")
	var got []Finding
	for _, fd := range Diagnose(&f.snap, DefaultOptions()).Findings {
		if fd.Rule == RuleWorkersAdmissionRefused {
			got = append(got, fd)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(got), got)
	}
	fd := got[0]
	want := map[string]string{"group": "small", "admitted": "3", "desired": "4",
		"refusals": "exceeded quota: ml-pods, requested: pods=1, used: pods=5, limited: pods=5"}
	for k, v := range want {
		if fd.Evidence[k] != v {
			t.Errorf("evidence %s = %q, want %q", k, fd.Evidence[k], v)
		}
	}
	if !strings.Contains(fd.Message, "so group big gets no pod") || fd.Field != "spec.workerGroupSpecs[0].template.spec.containers[0].resources" {
		t.Errorf("message %q, field %q", fd.Message, fd.Field)
	}
}

// desiredWorkers is KubeRay's GetWorkerGroupDesiredReplicas with the CRD's defaults.
func TestDesiredWorkers(t *testing.T) {
	i := func(n int32) *int32 { return &n }
	yes := true
	for _, tc := range []struct {
		g    rayv1.WorkerGroupSpec
		want int32
	}{
		{rayv1.WorkerGroupSpec{}, 0},
		{rayv1.WorkerGroupSpec{Replicas: i(3)}, 3},
		{rayv1.WorkerGroupSpec{Replicas: i(1), MinReplicas: i(2)}, 2},
		{rayv1.WorkerGroupSpec{Replicas: i(9), MaxReplicas: i(4)}, 4},
		{rayv1.WorkerGroupSpec{Replicas: i(1), MinReplicas: i(5), MaxReplicas: i(3)}, 3},
		{rayv1.WorkerGroupSpec{Replicas: i(2), NumOfHosts: 4}, 8},
		{rayv1.WorkerGroupSpec{Replicas: i(2), Suspend: &yes}, 0},
	} {
		if got := desiredWorkers(&tc.g); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.g, got, tc.want)
		}
	}
}
