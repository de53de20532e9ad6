package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// evictAfter is how long after our ephemeral container starts the played kubelet evicts the pod;
// the node's DiskPressure is played well within it, so the timeline reads in a real node's order.
const evictAfter = 6 * time.Second

// diskPressure reproduces seed 000 with chaos disk-pressure: a dry run, then a real inject with
// --watch-eviction while the kubelet's part is played, then doctor and heal.
func (d *demo) diskPressure(cluster string) error {
	title("kubectl ray chaos disk-pressure: fill the head's node disk from an ephemeral container")
	if _, err := d.waitHead(cluster, 60*time.Second); err != nil {
		return err
	}
	if err := d.sh("kubectl", "ray", "chaos", "disk-pressure", cluster, "--role", "head", "--size", "1Gi", "--duration", "30s", "--dry-run"); err != nil {
		return err
	}
	if err := d.injectAndWatch(cluster); err != nil {
		return err
	}
	fmt.Println("\nExit code 1: the evicted head was not replaced. KubeRay v1.1.1 leaves it Failed; doctor and heal take over.")
	return d.afterEviction(false)
}

// injectAndWatch runs the real inject with --watch-eviction while the kubelet's part is played;
// the played parts are gone when it returns.
func (d *demo) injectAndWatch(cluster string) error {
	fmt.Printf(`
No container runs in the sandbox and no kubelet, so the kubelet's part is played, and only it:
kwok Stages (namespace default only) start our ephemeral container and, %s after it runs, evict
the pod for ephemeral-storage as the kubelet's eviction manager writes it; the demo sets the node's
DiskPressure condition once the container runs and clears it after the eviction. The disk-pressure
taint, KubeRay's (non-)reaction, doctor and heal are the real components.
`, evictAfter)
	remove, err := play.KubeletPressureStages(d.ctx, d.sb.Admin, "default", evictAfter)
	if err != nil {
		return err
	}
	defer func() {
		if err := remove(context.Background()); err != nil {
			fmt.Println("demo: warning:", err)
		}
	}()
	ctx, cancel := context.WithTimeout(d.ctx, 90*time.Second)
	defer cancel()
	played := make(chan error, 1)
	go func() { played <- d.playNodeDiskPressure(ctx, cluster) }()
	// KubeRay v1.1.1 never replaces an evicted head: the watch ends at its timeout with exit 1.
	err = d.expect(1, "kubectl", "ray", "chaos", "disk-pressure", cluster, "--role", "head", "--size", "1Gi", "--duration", "30s",
		"--watch-eviction", "--timeout", "20s", "--yes")
	if err != nil {
		cancel()
		<-played
		return err
	}
	if err := <-played; err != nil {
		return fmt.Errorf("playing the kubelet: %v", err)
	}
	return nil
}

// playNodeDiskPressure plays the kubelet's eviction manager for the cluster's head: once our
// kubectl-ray-disk-pressure-* container runs, the node reports DiskPressure=True (the real node
// lifecycle controller then taints it); once the head is Failed, the evicted pod's disk is
// reclaimed and the condition goes back to False.
func (d *demo) playNodeDiskPressure(ctx context.Context, cluster string) error {
	w, err := d.sb.Kube.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=head"})
	if err != nil {
		return err
	}
	defer w.Stop()
	node := ""
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		if node == "" && p.Status.Phase == corev1.PodRunning && ourContainerRunning(p) {
			node = p.Spec.NodeName
			// Said before it is written, so it reads before the command's own line about it.
			fmt.Printf("(played) kubelet on %s: the disk is filling, DiskPressure=True\n", node)
			if err := play.KubeletNodePressure(ctx, d.sb.Kube, node, play.DiskPressure); err != nil {
				return err
			}
		}
		if node != "" && p.Status.Phase == corev1.PodFailed {
			if err := play.KubeletNodePressureRelieved(ctx, d.sb.Kube, node, play.DiskPressure); err != nil {
				return err
			}
			fmt.Printf("(played) kubelet on %s: evicted %s's disk reclaimed, DiskPressure=False\n", node, p.Name)
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("no eviction seen: %v", err)
	}
	return errors.New("the pod watch ended before the eviction")
}

func ourContainerRunning(p *corev1.Pod) bool {
	for _, s := range p.Status.EphemeralContainerStatuses {
		if strings.HasPrefix(s.Name, "kubectl-ray-disk-pressure-") && s.State.Running != nil {
			return true
		}
	}
	return false
}
