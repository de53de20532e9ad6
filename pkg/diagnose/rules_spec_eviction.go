package diagnose

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleHeadEvictableFirst: the kubelet would evict the head before pods that stay within their
// requests. Under node pressure it ranks pods by whether their use of the starved resource
// exceeds their request, then by priority, then by use above request (Kubernetes docs,
// "Node-pressure Eviction", pod selection). A head that requests no ephemeral-storage exceeds
// its request with its first byte of logs, so under disk pressure it ranks ahead of every pod
// within its request, whatever its priority (seed 000, ray#13877). A head whose memory can
// exceed its request (Burstable or BestEffort) while every worker is Guaranteed ranks ahead of
// them under memory pressure: a Guaranteed pod never uses more than it requests.
const RuleHeadEvictableFirst = "head-evictable-first"

func headEvictableFirst(c *clusterView) []Finding {
	groups := podGroups(&c.rc.Spec)
	head := groups[0]
	spec := admittedPodSpec(head.Template)
	if len(spec.Containers) == 0 {
		return nil
	}
	var why []string
	ev := map[string]string{"qosClass": string(qosClass(head.Template))}
	field := ""
	storage := podRequest(&spec, corev1.ResourceEphemeralStorage)
	if storage.IsZero() {
		why = append(why, "under disk pressure: it requests no ephemeral-storage, so any use exceeds its request")
		ev["ephemeralStorageRequest"] = "none"
		field = head.field("containers[0].resources.requests.ephemeral-storage")
	}
	if memoryCanExceedRequest(&spec) && workersGuaranteed(groups[1:]) {
		why = append(why, fmt.Sprintf("under memory pressure: it is %s and can use more than its memory request, its Guaranteed workers never do", ev["qosClass"]))
		ev["workersQosClass"] = string(corev1.PodQOSGuaranteed)
		if field == "" {
			field = head.field("containers[0].resources")
		}
	}
	if len(why) == 0 {
		return nil
	}
	if p := head.Template.Spec.PriorityClassName; p != "" {
		ev["priorityClassName"] = p
	}
	msg := fmt.Sprintf("the head of %s ranks first for eviction %s (the kubelet evicts pods using more than their request first, then by priority, then by use)",
		c.what(), strings.Join(why, "; and "))
	f := c.finding(RuleHeadEvictableFirst, state.ClusterRef(c.rc), msg, headProtection(head), ev)
	f.Field = field
	return []Finding{f}
}

// workersGuaranteed: the cluster has worker groups and every one is Guaranteed.
func workersGuaranteed(workers []podGroup) bool {
	if len(workers) == 0 {
		return false
	}
	for _, w := range workers {
		if qosClass(w.Template) != corev1.PodQOSGuaranteed {
			return false
		}
	}
	return true
}

// headProtection says what protects the head, leaving out what the template already has.
func headProtection(head podGroup) string {
	steps := []string{"request ephemeral-storage on the head's Ray container above what it writes (logs and spilled objects under /tmp/ray), and set its memory request equal to its limit"}
	if head.Template.Spec.PriorityClassName == "" {
		steps = append(steps, "give the head a PriorityClass above its workers' (priorityClassName)")
	}
	if head.Template.Annotations[ray.AnnotationSafeToEvict] != "false" {
		steps = append(steps, `against voluntary disruptions (drains, autoscaler scale-down), annotate the head's pod template `+ray.AnnotationSafeToEvict+`: "false"`)
	}
	steps = append(steps, "cover the head with a PodDisruptionBudget (selector ray.io/node-type: head, ray.io/cluster: NAME; KubeRay creates none, kuberay #5004)")
	return strings.Join(steps, "; ")
}
