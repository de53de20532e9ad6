// Package follow is the follow half of the chaos engine: the watches that tell a run what
// happened to the cluster while it ran, each event handed to the experiment's own timeline on the
// run's clock. The probe half (pkg/chaos/experiment) sends the requests; this half knows nothing
// of the probe, nor of any one experiment.
//
// Two ways of following, for two shapes of run:
//   - Cluster: informers over a RayCluster's (or a RayService's) pods and KubeRay's objects,
//     which head-kill, upgrade, drain and worker-kill follow under the probe.
//   - Set: watches opened from a version already read and resumed from the last version seen,
//     followed in one loop with a clock, which pressure follows on one node (its target, the
//     node, the node's other pods and the kubelet's Evicted Events, and a container's log).
package follow

import (
	"context"
	"fmt"
	"io"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Tracker hears the watches of a Cluster: the pods, the RayClusters and the RayService.
type Tracker interface {
	Pod(p *corev1.Pod, deleted bool, at time.Time)
	RayCluster(rc *rayv1.RayCluster, deleted bool, at time.Time)
	RayService(rs *rayv1.RayService, at time.Time)
}

// Watcher starts the watches of a Cluster (pkg/kube's Clients, or a fake).
type Watcher interface {
	RunClusterWatch(ctx, startup context.Context, w kube.ClusterWatch) (<-chan error, error)
}

// Cluster starts the watches of w on ctx, each event told to tr at now(). It returns once every
// watch has listed, or with startup's error (the caller explains it); a watch that ends mid-run
// is one warning line on warn, and the run goes on without it.
func Cluster(ctx, startup context.Context, c Watcher, w kube.ClusterWatch, tr Tracker, now func() time.Time, warn io.Writer) error {
	w.OnPod = func(p *corev1.Pod, deleted bool) { tr.Pod(p, deleted, now()) }
	w.OnRayCluster = func(rc *rayv1.RayCluster, deleted bool) { tr.RayCluster(rc, deleted, now()) }
	w.OnRayService = func(rs *rayv1.RayService, _ bool) { tr.RayService(rs, now()) }
	errs, err := c.RunClusterWatch(ctx, startup, w)
	if err != nil {
		return err
	}
	go func() {
		for err := range errs {
			Warn(warn, "%v; the timeline may miss events", err)
		}
	}()
	return nil
}

// Warn writes one warning line to w (none when w is nil).
func Warn(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, "warning: "+format+"\n", a...)
	}
}
