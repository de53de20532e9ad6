package diagnose

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleShmSmallerThanObjectStore: a group mounts a sized emptyDir at /dev/shm smaller than the
// object store Ray would create there: rayStartParams["object-store-memory"], else Ray's default
// share of the memory it sees (DEFAULT_OBJECT_STORE_MEMORY_PROPORTION, 0.3, in Ray's
// python/ray/_private/ray_constants.py; KubeRay's memory is the container's limit). Ray then puts
// the object store in /tmp instead, on disk ("The object store is using /tmp instead of /dev/shm
// because /dev/shm has only ... bytes available. This will harm performance!").
const RuleShmSmallerThanObjectStore = "shm-smaller-than-object-store"

// rayObjectStoreShare is Ray's default object store size as a share of the memory it sees.
const rayObjectStoreShare = 0.3

// shmVolume is the sized emptyDir c mounts at /dev/shm, and its limit.
func shmVolume(spec *corev1.PodSpec, c *corev1.Container) (string, resource.Quantity, bool) {
	for _, m := range c.VolumeMounts {
		if strings.TrimRight(m.MountPath, "/") != ray.ShmPath {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
				return v.Name, v.EmptyDir.SizeLimit.DeepCopy(), true
			}
		}
	}
	return "", resource.Quantity{}, false
}

func shmSmallerThanObjectStore(c *clusterView) []Finding {
	var out []Finding
	for _, g := range podGroups(&c.rc.Spec) {
		spec := &g.Template.Spec
		if len(spec.Containers) == 0 {
			continue
		}
		rayContainer := &spec.Containers[0]
		vol, shm, ok := shmVolume(spec, rayContainer)
		if !ok {
			continue
		}
		var store int64
		from := ""
		if v := strings.Trim(strings.TrimSpace(g.RayStartParams["object-store-memory"]), `"'`); v != "" {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				continue
			}
			store, from = q.Value(), "rayStartParams object-store-memory"
		} else if lim, ok := rayContainer.Resources.Limits[corev1.ResourceMemory]; ok {
			store, from = int64(float64(lim.Value())*rayObjectStoreShare), fmt.Sprintf("Ray's default, 30%% of the memory limit %s", lim.String())
		} else {
			continue // Ray's share of the node's memory: not in the spec
		}
		if shm.Value() >= store {
			continue
		}
		storeQ := resource.NewQuantity(store, resource.BinarySI)
		f := c.finding(RuleShmSmallerThanObjectStore, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s mounts %s (volume %s, sizeLimit %s) smaller than its object store, %d bytes (%s): Ray puts the object store in /tmp, on disk, instead", g.Name, c.what(), ray.ShmPath, vol, shm.String(), store, from),
			fmt.Sprintf("raise the sizeLimit of volume %s to at least %s, or set rayStartParams object-store-memory below it", vol, storeQ.String()),
			map[string]string{"group": g.Name, "volume": vol, "sizeLimit": shm.String(), "objectStoreBytes": fmt.Sprint(store)})
		f.Field = g.field("volumes")
		for i, v := range spec.Volumes {
			if v.Name == vol {
				f.Field = g.field(fmt.Sprintf("volumes[%d].emptyDir.sizeLimit", i))
			}
		}
		out = append(out, f)
	}
	return out
}
