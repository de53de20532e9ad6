//go:build bench

package doctor

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

const (
	namespaces        = 10
	workersPerCluster = 4 // 1 head + 4 workers = 5 pods a cluster, 5,000 in all at -scale 1
	nodes             = 4
	brokenEvery       = 50 // 2% of heads
)

// -scale 4 is the fleet four times larger: 4,000 RayClusters and 20,000 pods.
var scale = flag.Int("scale", 1, "fleet size: 1 = 1,000 RayClusters and 5,000 pods; 4 = 4,000 and 20,000")

// compareBin is another kubectl-ray build whose doctor is timed in turn with this tree's, in the
// same run, against the same floor (e.g. an earlier commit built with bench/internal/release's
// settings).
var compareBin = flag.String("compare-bin", "", "another kubectl-ray binary to time beside this tree's doctor")

// clusters is 1,000 × -scale, set when the test starts.
var clusters = 1000

func nsName(i int) string      { return fmt.Sprintf("bench-%02d", i%namespaces) }
func clusterName(i int) string { return fmt.Sprintf("rc-%04d", i) }

// parallel runs f(0..n-1) on at most width goroutines and returns the first error.
func parallel(n, width int, f func(i int) error) error {
	g := new(errgroup.Group)
	g.SetLimit(width)
	for i := 0; i < n; i++ {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}

// rayPod is a pod as KubeRay v1.1.1 builds it for the sample cluster (labels, ports, env, /dev/shm,
// the ray start command), bound to node: no operator runs, so the benchmark makes the pods.
func rayPod(ns, cluster, nodeType string, idx int, node string) *corev1.Pod {
	name := fmt.Sprintf("%s-%s-%05d", cluster, nodeType, idx)
	group := "headgroup"
	cmd := "ulimit -n 65536; ray start --head --dashboard-host=0.0.0.0 --metrics-export-port=8080 --block --dashboard-agent-listen-port=52365 --num-cpus=1 --memory=2147483648"
	if nodeType == "worker" {
		group = "small-group"
		cmd = "ulimit -n 65536; ray start --address=" + cluster + "-head-svc." + ns + ".svc.cluster.local:6379 --metrics-export-port=8080 --block --dashboard-agent-listen-port=52365 --num-cpus=1 --memory=1073741824"
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2G")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			"ray.io/cluster": cluster, "ray.io/node-type": nodeType, "ray.io/is-ray-node": "yes", "ray.io/group": group,
			"ray.io/identifier": cluster + "-" + nodeType, "app.kubernetes.io/created-by": "kuberay-operator", "app.kubernetes.io/name": "kuberay",
		}, Annotations: map[string]string{"ray.io/ft-enabled": "false"}},
		Spec: corev1.PodSpec{
			NodeName:      node,
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{
				Name: "ray-" + nodeType, Image: "rayproject/ray:2.9.0",
				Command: []string{"/bin/bash", "-lc", "--"}, Args: []string{cmd},
				Ports: []corev1.ContainerPort{{Name: "gcs", ContainerPort: 6379}, {Name: "dashboard", ContainerPort: 8265},
					{Name: "client", ContainerPort: 10001}, {Name: "metrics", ContainerPort: 8080}},
				Env: []corev1.EnvVar{{Name: "RAY_CLUSTER_NAME", Value: cluster}, {Name: "RAY_PORT", Value: "6379"},
					{Name: "RAY_ADDRESS", Value: "127.0.0.1:6379"}, {Name: "RAY_USAGE_STATS_KUBERAY_IN_USE", Value: "1"},
					{Name: "RAY_USAGE_STATS_EXTRA_TAGS", Value: "kuberay_version=v1.1.1;kuberay_crd=RayCluster"},
					{Name: "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", Value: "1"}},
				Resources:    corev1.ResourceRequirements{Limits: res, Requests: res},
				VolumeMounts: []corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}},
			}},
			Volumes: []corev1.Volume{{Name: "shared-mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
		},
	}
}

// completeSample is KubeRay's ray-cluster.complete.yaml, as the sandbox keeps it.
func completeSample(t *testing.T, sb *sandbox.Sandbox) rayv1.RayCluster {
	t.Helper()
	data, err := os.ReadFile(sb.Config().SamplePath("ray-cluster.complete.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sample rayv1.RayCluster
	if err := yaml.Unmarshal(data, &sample); err != nil {
		t.Fatal(err)
	}
	return sample
}

// fill creates the namespaces, 1,000 RayClusters (KubeRay's complete sample) and their 5,000
// pods, and waits until kwok runs every pod.
func fill(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, ray rayclient.Interface) {
	start := time.Now()
	sample := completeSample(t, sb)
	for i := 0; i < namespaces; i++ {
		if _, err := sb.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	uids := make([]types.UID, clusters)
	err := parallel(clusters, 16, func(i int) error {
		rc := sample.DeepCopy()
		rc.Name, rc.Namespace = clusterName(i), nsName(i)
		created, err := ray.RayV1().RayClusters(rc.Namespace).Create(ctx, rc, metav1.CreateOptions{})
		if err == nil {
			uids[i] = created.UID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	per := 1 + workersPerCluster
	createPod := func(j int) error {
		i, k := j/per, j%per
		nodeType := "head"
		if k > 0 {
			nodeType = "worker"
		}
		p := rayPod(nsName(i), clusterName(i), nodeType, j, sandbox.NodeName(j%nodes))
		// KubeRay makes each pod controlled by its RayCluster (heal --watch acts only on those).
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: clusterName(i), UID: uids[i], Controller: &yes, BlockOwnerDeletion: &yes}}
		_, err := sb.Kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		return err
	}
	// Every head before any worker, as KubeRay creates a cluster's head before its workers. Made
	// all at once, a worker could be created a second before its own head; kwok, which runs
	// pods in no particular order, could start it first too, and workers-stale rightly reports
	// a worker older than its head that started before it (four clusters at -scale 4 did).
	err = parallel(clusters, 32, func(i int) error { return createPod(i * per) })
	if err == nil {
		err = parallel(clusters*workersPerCluster, 32, func(j int) error { return createPod(j/workersPerCluster*per + 1 + j%workersPerCluster) })
	}
	if err != nil {
		t.Fatal(err)
	}
	// The Events KubeRay v1.5+ records when it creates a cluster's pods (no operator runs, so the
	// benchmark writes them): doctor's one LIST of Events must not pay for them (its field selector
	// leaves creations on the server).
	err = parallel(clusters*2, 32, func(j int) error {
		i := j / 2
		reason, pod := "CreatedHeadPod", fmt.Sprintf("%s-head-%05d", clusterName(i), i*per)
		if j%2 == 1 {
			reason, pod = "CreatedWorkerPod", fmt.Sprintf("%s-worker-%05d", clusterName(i), i*per+1)
		}
		now := metav1.Now()
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", clusterName(i), j), Namespace: nsName(i)},
			InvolvedObject: corev1.ObjectReference{Kind: "RayCluster", APIVersion: "ray.io/v1", Namespace: nsName(i), Name: clusterName(i)},
			Reason:         reason, Message: "Created " + map[bool]string{true: "head", false: "worker"}[j%2 == 0] + " Pod " + nsName(i) + "/" + pod,
			Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "raycluster-controller"},
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}
		_, err := sb.Kube.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d RayClusters, %d pods and %d Events in %s", clusters, clusters*per, clusters*2, time.Since(start).Round(time.Second))
	for {
		running := 0
		list, err := sb.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "ray.io/is-ray-node=yes", ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		var notReady []*corev1.Pod
		for i := range list.Items {
			switch p := &list.Items[i]; {
			case runningReady(p):
				running++
			case p.Status.Phase == corev1.PodRunning:
				notReady = append(notReady, p)
			}
		}
		// Under load kwok's heartbeats lag, the node lifecycle controller marks every pod of a
		// "lost" node NotReady, and kwok never marks them Ready again. A real kubelet would:
		// play it for the pods kwok already runs.
		if err := parallel(len(notReady), 16, func(i int) error { return markReady(ctx, sb.Kube, notReady[i]) }); err != nil {
			t.Logf("marking pods Ready again: %v", err)
		}
		if running == clusters*per {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d pods Running and Ready", running, clusters*per)
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("kwok runs all %d pods after %s", clusters*per, time.Since(start).Round(time.Second))
}

func markReady(ctx context.Context, kube kubernetes.Interface, p *corev1.Pod) error {
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
		}
	}
	_, err := kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

func runningReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// breakHeads breaks every brokenEvery-th head in one of five ways, all status writes of the parts
// that do not run here (kubelet stand-ins from test/play, and the operator's status for
// status-stale). It returns cluster "ns/name" → the rule that must fire.
func breakHeads(ctx context.Context, t *testing.T, kube kubernetes.Interface, ray rayclient.Interface) map[string]string {
	want := map[string]string{}
	per := 1 + workersPerCluster
	for n, i := 0, 0; i < clusters; n, i = n+1, i+brokenEvery {
		ns, cluster := nsName(i), clusterName(i)
		head := fmt.Sprintf("%s-head-%05d", cluster, i*per)
		var err error
		var rule string
		switch n % 5 {
		case 0:
			rule = "head-evicted"
			_, err = play.KubeletEvict(ctx, kube, ns, head, "ephemeral-storage")
		case 1:
			rule = "head-crashloop"
			_, err = play.KubeletCrashLoop(ctx, kube, ns, head, "OOMKilled", 4)
		case 2:
			rule = "image-pull-failed"
			_, err = play.KubeletImagePullBackOff(ctx, kube, ns, head)
		case 3:
			rule = "head-terminated"
			err = nodeShutdown(ctx, kube, ns, head)
		case 4:
			// The head fails its readiness probe while the RayCluster still reads ready (the
			// operator's status, written here: no operator runs).
			rule = "status-stale"
			if _, err = play.KubeletPodNotReady(ctx, kube, ns, head); err == nil {
				var rc *rayv1.RayCluster
				if rc, err = ray.RayV1().RayClusters(ns).Get(ctx, cluster, metav1.GetOptions{}); err == nil {
					rc.Status.State = rayv1.Ready
					_, err = ray.RayV1().RayClusters(ns).UpdateStatus(ctx, rc, metav1.UpdateOptions{})
				}
			}
		}
		if err != nil {
			t.Fatalf("breaking %s/%s: %v", ns, head, err)
		}
		want[ns+"/"+cluster] = rule
	}
	return want
}

// nodeShutdown writes what the kubelet's graceful node shutdown leaves on a pod: Failed, reason
// Terminated, containers exited 137.
func nodeShutdown(ctx context.Context, kube kubernetes.Interface, ns, name string) error {
	pod, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	pod.Status.Phase, pod.Status.Reason = corev1.PodFailed, "Terminated"
	pod.Status.Message = "Pod was terminated in response to imminent node shutdown."
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.LastTransitionTime = corev1.ConditionFalse, now
		}
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		cs.Ready = false
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", FinishedAt: now}}
	}
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}
