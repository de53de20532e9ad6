package load

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Full is who sees the objects FromAPI trims, whole, as each page arrives: the Ray and submitter
// pods, the RayClusters, the nodes and the Redis cleanup Jobs; and the RayServices and RayJobs.
// Each is called from the goroutine of its LIST, so several at once, and must neither keep nor
// change the object (it is trimmed when the call returns). The Ray objects come with their JSON
// as the API server served them, with the fields of KubeRay releases newer than the API types
// (which the typed object drops); the JSON is the callee's to keep. A nil field sees nothing. A
// LIST restarted after its continue token expired shows an object again.
type Full struct {
	Cluster    func(*rayv1.RayCluster, []byte)
	RayService func(*rayv1.RayService, []byte)
	RayJob     func(*rayv1.RayJob, []byte)
	RayCronJob func(*ray.RayCronJob, []byte)
	Pod        func(*corev1.Pod)
	Node       func(*corev1.Node)
	Job        func(*batchv1.Job)
}

// see hands o to f, when there is one.
func see[T any](f func(*T), o *T) {
	if f != nil {
		f(o)
	}
}
