package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// serveOutage is how long the stand-in Serve proxies answer 502 after the head is killed.
const serveOutage = 2 * time.Second

// headKill kills the cluster's head with chaos head-kill while traffic flows through a serve
// Service, and prints the text report. Ray Serve and the RayService controller are played by
// play.ServeScene; the operator that recreates the head is real.
func (d *demo) headKill(cluster string) error {
	title("kubectl ray chaos head-kill: kill the head under traffic, see which pod failed which request")
	fmt.Printf(`No Ray runs in the sandbox, so the Ray Serve HTTP proxies are stand-ins: each pod's port %d is
a small HTTP server on this machine, reached through a kwok PortForward object and the plugin's own
port-forward through the API server. A stand-in answers 200, and 502 for %s after the head is
killed (Ray Serve without GCS fault tolerance fails until its apps are redeployed). A pod watch
plays the RayService controller, labelling Ready pods ray.io/serve=true for the serve Service.
kwok makes a new pod Running and Ready within milliseconds, so recovery here is far faster than
on a real cluster (image pull, Ray start, Serve redeploy).
`, play.ServePort, serveOutage)
	sc, err := play.StartServeScene(d.ctx, d.sb.Kube, d.sb.Admin, "default", cluster, play.ServeSceneOptions{
		Outage: serveOutage,
		Logf:   func(format string, args ...any) { fmt.Printf("(serve stand-ins) "+format+"\n", args...) },
	})
	if err != nil {
		return fmt.Errorf("setting up the serve stand-ins: %v", err)
	}
	defer sc.Close()
	n, err := d.readyPods(cluster)
	if err != nil {
		return err
	}
	if err := sc.WaitServing(d.ctx, n, 60*time.Second); err != nil {
		return err
	}
	_ = d.sh("kubectl", "get", "pods", "-l", "ray.io/cluster="+cluster+",ray.io/serve=true")

	before := time.Now()
	if err := d.sh("kubectl", "ray", "chaos", "head-kill", cluster, "--service", sc.Service, "--port", fmt.Sprint(play.ServePort),
		"--rate", "20/s", "--warmup", "3s", "--until-recovered", "--timeout", "60s", "--yes"); err != nil {
		return err
	}
	// What the stand-ins counted themselves, to hold the report's totals against.
	_, total, _ := sc.Tally(before)
	sum, codes := 0, []string{}
	for code, k := range total {
		sum += k
		codes = append(codes, fmt.Sprintf("%s=%d", code, k))
	}
	sort.Strings(codes)
	fmt.Printf("\nThe stand-ins themselves answered %d requests: %s (the report's totals count the same requests).\n", sum, strings.Join(codes, " "))
	if total["502"] == 0 {
		fmt.Fprintln(os.Stderr, "demo: note: the stand-ins served no 502: the probe sent nothing during the outage")
	}
	return sc.Err()
}

// readyPods counts the cluster's Running and Ready pods: the endpoints the serve Service will have.
func (d *demo) readyPods(cluster string) (int, error) {
	pods, err := d.sb.Kube.CoreV1().Pods("default").List(d.ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + cluster})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podutils.IsPodReady(p) {
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("RayCluster %s has no Running and Ready pod to serve from", cluster)
	}
	return n, nil
}
