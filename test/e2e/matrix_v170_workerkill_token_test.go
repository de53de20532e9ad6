package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// worker-kill --serve-replicas on KubeRay v1.7.0's real RayService controller, with Ray's token
// authentication: the version's own ray-service.sample.yaml on Ray 2.52.0 with authOptions
// {mode: token} and two workers, whose deployments the Ray stand-ins place on the first worker
// (PlayServeReplicas, PlayDashboardTokenAuth: a read without the token is refused as Ray refuses
// it). The operator reaches Ready with its token; worker-kill reads the replicas' hosts with the
// Secret's token, kills exactly that worker, leaves the other, and no output holds the token.
// kwok plays the kubelet. About 25 s.
func matrixWorkerKillToken(t *testing.T, h *H, v kubeRayVersion) {
	ray := startRay(h, play.RayOptions{DeployTime: time.Second, ReplicaWorkers: 1})
	cluster := h.createTokenRayService("rs", v.version, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
		rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2)
	})
	workers := h.waitReadyWorkers(cluster, 2, 60*time.Second, nil)
	h.waitServeEndpoints("rs-serve-svc", append([]string{h.headOf(cluster).Name}, workers...))
	hosts := ray.ReplicaPods(cluster)
	if len(hosts) != 1 || hosts[0] != workers[0] {
		t.Fatalf("the stand-ins place replicas on %v, want the first of %v", hosts, workers)
	}
	bystander := h.pod(workers[1])

	res := h.Run("chaos", "worker-kill", "rayservice/rs", "--serve-replicas", "--path", "/fruit", "--rate", "20/s", "--warmup", "1s",
		"--count", "1", "--until-recovered", "--timeout", "60s", "-o", "json", "--yes")
	r := &workerKillReport{}
	if err := json.Unmarshal([]byte(res.Stdout), r); err != nil || r.Kind != "WorkerKillReport" || res.Code != 0 {
		t.Fatalf("KubeRay %s with token authentication: not a WorkerKillReport, or not exit 0 (%v): %s", v.version, err, res)
	}
	if len(r.Kill.Pods) != 1 || r.Kill.Pods[0].Pod != h.NS+"/"+hosts[0] {
		t.Errorf("killed %+v; want the replicas' host %s alone", r.Kill.Pods, hosts[0])
	}
	if now := h.pod(workers[1]); now == nil || now.UID != bystander.UID || now.DeletionTimestamp != nil {
		t.Errorf("worker %s hosts no replica and was touched", workers[1])
	}
	if strings.Contains(res.Stdout+res.Stderr, h.clusterToken(cluster)) {
		t.Fatalf("the token is in an output of chaos worker-kill:\n%s", res)
	}
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}
