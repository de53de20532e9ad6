package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// rayServiceName is the name in KubeRay's ray-service.sample.yaml.
const rayServiceName = "rayservice-sample"

// rayService runs seed 003 against KubeRay's own RayService controller: the operator creates the
// serve Service, labels the pods it routes to and resubmits the Serve apps to a new head; Ray is
// played by the stand-ins of test/play (StartRay), which the operator reaches through the
// sandbox's pod network (Config.ServeNetwork).
func (d *demo) rayService() error {
	title("A RayService under KubeRay v1.1.1's own RayService controller: kill its head under traffic")
	fmt.Println(`No Ray runs here, so each Ray pod gets stand-ins on this machine: a dashboard on the head that
takes the Serve apps the operator submits, and a Serve proxy on every pod that answers 502 once
its head is gone until the operator has resubmitted the apps to the new head (what Ray Serve
without GCS fault tolerance does). The operator reaches them through the sandbox's pod network;
kubectl ray reaches them through port-forwards, as on a real cluster.`)
	ray, err := play.StartRay(d.ctx, d.sb.Kube, d.sb.Admin, "default", play.RayOptions{DeployTime: time.Second,
		Logf: func(string, ...any) {}})
	if err != nil {
		return fmt.Errorf("starting the Ray stand-ins: %v", err)
	}
	defer ray.Close()
	if err := d.sh("kubectl", "create", "-f", d.sb.Config().SamplePath("ray-service.sample.yaml")); err != nil {
		return err
	}
	if err := d.sh("kubectl", "wait", "rayservice/"+rayServiceName, "--for=jsonpath={.status.serviceStatus}=Running", "--timeout=120s"); err != nil {
		return err
	}
	if err := d.waitServeEndpoints(rayServiceName+"-serve-svc", 2, 60*time.Second); err != nil {
		return err
	}
	_ = d.sh("kubectl", "get", "pods", "-L", "ray.io/serve")

	before := time.Now()
	if err := d.sh("kubectl", "ray", "chaos", "head-kill", "rayservice/"+rayServiceName, "--path", "/fruit",
		"--rate", "20/s", "--warmup", "3s", "--until-recovered", "--timeout", "90s", "--yes"); err != nil {
		return err
	}
	_, served := ray.Tally(before, false)
	var codes []string
	sum := 0
	for code, k := range served {
		sum += k
		codes = append(codes, fmt.Sprintf("%s=%d", code, k))
	}
	sort.Strings(codes)
	fmt.Printf("\nThe stand-ins themselves answered %d requests: %s (the report's totals count the same requests).\n", sum, strings.Join(codes, " "))
	return ray.Err()
}

// waitServeEndpoints waits until the Service has at least n ready endpoints: the operator has
// labelled the pods it routes to.
func (d *demo) waitServeEndpoints(service string, n int, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		l, err := d.sb.Kube.DiscoveryV1().EndpointSlices("default").List(d.ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + service})
		if err != nil {
			continue
		}
		ready := 0
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready++
				}
			}
		}
		if ready >= n {
			return nil
		}
	}
	return fmt.Errorf("service %s has fewer than %d ready endpoints after %s", service, n, timeout)
}
