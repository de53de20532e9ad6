package diagnose

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubectl/pkg/util/qos"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

// specRules read only the spec of a RayCluster and of the RayService or RayJob that owns it
// (scope "spec"): the same on a live cluster and on a manifest read from a file (doctor -f,
// Options.SpecOnly). Their findings carry Field, the path of what they are about.
func specRules(ix *index, c *clusterView) []Finding {
	out := specRefused(ix, c)
	out = append(out, serveSpecRules(c)...)
	out = append(out, rayServiceSpecRules(ix, c)...)
	out = append(out, headEvictableFirst(c)...)
	out = append(out, rayContainerRules(c)...)
	out = append(out, imageRayVersionRules(c)...)
	out = append(out, gcsReconnectTimeout(c)...)
	out = append(out, shmSmallerThanObjectStore(c)...)
	out = append(out, podResourcesInvalid(c)...)
	return out
}

// podGroup is the head group or one worker group of a spec: its pod template and where it is.
type podGroup struct {
	// Path is the group's field path in a RayCluster: spec.headGroupSpec, spec.workerGroupSpecs[1].
	Path string
	// Name is "head" or the worker group's name, for messages.
	Name           string
	Head           bool
	Template       *corev1.PodTemplateSpec
	RayStartParams map[string]string
	Replicas       int32
}

// field is the path of a field under the group's pod spec: "containers[0].resources".
func (g podGroup) field(under string) string { return g.Path + ".template.spec." + under }

// podGroups are the head group and the worker groups of spec, in spec order.
func podGroups(spec *rayv1.RayClusterSpec) []podGroup {
	h := &spec.HeadGroupSpec
	out := []podGroup{{Path: "spec.headGroupSpec", Name: "head", Head: true, Template: &h.Template, RayStartParams: h.RayStartParams, Replicas: 1}}
	for i := range spec.WorkerGroupSpecs {
		w := &spec.WorkerGroupSpecs[i]
		var n int32 = 1
		if w.Replicas != nil {
			n = *w.Replicas
		}
		out = append(out, podGroup{Path: fmt.Sprintf("spec.workerGroupSpecs[%d]", i), Name: "worker group " + w.GroupName,
			Template: &w.Template, RayStartParams: w.RayStartParams, Replicas: n})
	}
	return out
}

// admittedPodSpec is a template's pod spec as the API server stores the pod: a container's
// limit with no request of the same resource is also its request (the defaulting every pod
// gets, which the kubelet's ranking and the QoS class see). A LimitRange's defaults are not
// known from the spec alone.
func admittedPodSpec(t *corev1.PodTemplateSpec) corev1.PodSpec {
	spec := *t.Spec.DeepCopy()
	fill := func(cs []corev1.Container) {
		for i := range cs {
			r := &cs[i].Resources
			for name, lim := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = lim.DeepCopy()
				}
			}
		}
	}
	fill(spec.InitContainers)
	fill(spec.Containers)
	return spec
}

// qosClass is the QoS class Kubernetes gives a pod of the template (init containers included).
func qosClass(t *corev1.PodTemplateSpec) corev1.PodQOSClass {
	return qos.ComputePodQOS(&corev1.Pod{Spec: admittedPodSpec(t)})
}

// podRequest is a pod's request of one resource as the kubelet counts it: the sum over its
// containers, at least the largest of its init containers (a restartable init container, a
// sidecar, adds to both), or the pod-level request when there is one.
func podRequest(spec *corev1.PodSpec, name corev1.ResourceName) resource.Quantity {
	if spec.Resources != nil {
		if q, ok := spec.Resources.Requests[name]; ok {
			return q.DeepCopy()
		}
	}
	var sum, sidecars, initMax resource.Quantity
	for _, c := range spec.Containers {
		if q, ok := c.Resources.Requests[name]; ok {
			sum.Add(q)
		}
	}
	for _, c := range spec.InitContainers {
		q, ok := c.Resources.Requests[name]
		if !ok {
			continue
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(q)
			continue
		}
		// A regular init container runs with the sidecars started before it; this is the
		// upper bound the kubelet's own sum never exceeds.
		if q.Cmp(initMax) > 0 {
			initMax = q.DeepCopy()
		}
	}
	sum.Add(sidecars)
	if initMax.Cmp(sum) > 0 {
		return initMax
	}
	return sum
}

// memoryCanExceedRequest: some container of the pod may use more memory than it requests (no
// memory limit, or a limit above the request), so the pod can rank among those whose use
// exceeds their request under memory pressure.
func memoryCanExceedRequest(spec *corev1.PodSpec) bool {
	for _, c := range spec.Containers {
		lim, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok {
			return true
		}
		if req := c.Resources.Requests[corev1.ResourceMemory]; lim.Cmp(req) > 0 {
			return true
		}
	}
	return false
}
