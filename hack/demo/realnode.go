package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// realCluster is the RayCluster of the real-node act.
const realCluster = "seed-real"

// seed000Real is seed 000 with nothing played: KubeRay's sample with its head on the sandbox's
// real node (a kubelet on containerd, real containers; the Ray in them is the stand-in image,
// docs/sandbox.md), its disk filled by chaos disk-pressure from an ephemeral container until the
// real kubelet evicts the head, KubeRay v1.1.1 leaving it, doctor and heal.
func (d *demo) seed000Real() error {
	title("Seed 000 on a real node: a kubelet on containerd and runc, real containers (Ray in them is a stand-in)")
	_ = d.sh("kubectl", "get", "nodes", "-L", sandbox.RealNodeLabel)
	manifest, err := d.realSample()
	if err != nil {
		return err
	}
	fmt.Printf("KubeRay's ray-cluster.complete.yaml, named %s, with its head placed on %s (nodeSelector and toleration) and its workers on kwok's nodes:\n", realCluster, sandbox.RealNodeName)
	if err := d.sh("kubectl", "create", "-f", manifest); err != nil {
		return err
	}
	head, err := d.waitHead(realCluster, 2*time.Minute)
	if err != nil {
		return err
	}
	_ = d.sh("kubectl", "get", "pods", "-o", "wide", "-l", "ray.io/cluster="+realCluster)

	title("Fill " + sandbox.RealNodeName + "'s disk from an ephemeral container in " + head + ": the real kubelet evicts the head")
	fmt.Printf("The node's disk is a %d MiB filesystem whose eviction threshold is %s free; 800Mi crosses it.\n", sandbox.RealNodeDiskBytes>>20, sandbox.RealNodeEvictionNodefs)
	if err := d.sh("kubectl", "ray", "chaos", "disk-pressure", realCluster, "--size", "800Mi", "--duration", "60s",
		"--image", sandbox.BusyboxImage, "--dry-run"); err != nil {
		return err
	}
	// Exit 1: the evicted head was not replaced within --timeout, which is seed 000.
	if err := d.expect(1, "kubectl", "ray", "chaos", "disk-pressure", realCluster, "--size", "800Mi", "--duration", "60s",
		"--image", sandbox.BusyboxImage, "--watch-eviction", "--timeout", "40s", "--yes"); err != nil {
		return err
	}
	_ = d.sh("kubectl", "get", "pods", "-o", "wide", "-l", "ray.io/cluster="+realCluster)
	_ = d.sh("kubectl", "get", "events", "--field-selector", "involvedObject.name="+head+",reason=Evicted")
	fmt.Println("The kubelet evicted the head; KubeRay v1.1.1 leaves it Failed/Evicted. Its log says why:")
	d.operatorWillNotDelete()
	return d.afterEviction(true)
}

// realSample writes KubeRay's sample with the head on the real node, and returns its path.
func (d *demo) realSample() (string, error) {
	data, err := os.ReadFile(d.sb.Config().SamplePath("ray-cluster.complete.yaml"))
	if err != nil {
		return "", err
	}
	rc := &rayv1.RayCluster{}
	if err := yaml.Unmarshal(data, rc); err != nil {
		return "", err
	}
	rc.Name = realCluster
	sandbox.RealNodePlacement(&rc.Spec.HeadGroupSpec.Template.Spec)
	for i := range rc.Spec.WorkerGroupSpecs {
		rc.Spec.WorkerGroupSpecs[i].Template.Spec.NodeSelector = map[string]string{"type": "kwok"}
	}
	out, err := yaml.Marshal(rc)
	if err != nil {
		return "", err
	}
	path := filepath.Join(d.sb.Config().Dir, realCluster+".yaml")
	return path, os.WriteFile(path, out, 0o644)
}

// operatorWillNotDelete prints KubeRay v1.1.1's own reason for leaving the head.
func (d *demo) operatorWillNotDelete() {
	log, err := os.ReadFile(d.sb.LogPath("kuberay-operator"))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "will not delete the Pod") {
			var entry struct{ Reason string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Reason != "" {
				line = entry.Reason
			}
			fmt.Println("  " + truncate(line, 300))
			return
		}
	}
}
