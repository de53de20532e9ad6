package main

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// The sandbox's real node (docs/sandbox.md): its label and taint, and the containerd it runs,
// at the one socket a real node on this machine can use (test/sandbox: RealNodeLabel,
// RealNodeTaint, ContainerdSocket; this module does not import the root one).
const (
	realNodeLabel    = "kubectl-ray.io/real-node"
	containerdSocket = "/run/containerd/containerd.sock"
	requireRealNode  = "KUBECTL_RAY_REQUIRE_REAL_NODE"
	// imageTag is the test build's version and the image's tag.
	imageTag = "v0.0.0-realnode"
)

// The watchdog as users run it: the release image (hack/release/image, from a release build of
// the binary) imported into the real node's containerd, the chart installed with it through
// Helm's action library, and its two replicas run by the real kubelet on real-node-0, with
// KubeRay v1.1.1 (which never replaces an evicted head, kuberay #2125):
//   - one replica becomes leader, its probes make it Ready, its metrics answer through the
//     kubelet's port-forward, and it heals an evicted head: logs, Events and metrics say so;
//   - the leader pod is deleted: the other replica takes the Lease and heals the next evicted
//     head, and neither heal is done twice;
//   - uninstall leaves nothing of it, and no frame left the machine on any interface but
//     loopback from before the install to after the uninstall.
//
// What a real cluster would not need is in the test's values only (docs/sandbox.md): the real
// node has no pod network (a pod's address is on its own loopback), so the pods run on the
// host's network (hostNetwork), and KUBERNETES_SERVICE_HOST/PORT name the API server on
// loopback (the kubernetes Service's ClusterIP is not routed here, and a pod on the host network
// that dialled it would send packets off the machine); both are set before the pod starts. On
// the host's network the metrics port is the node's, so of two replicas on one node only one
// can be scheduled: the other waits Pending (FailedScheduling, no free ports) and takes over when
// the leader's pod is gone. With a pod network both would run, the standby Ready.
//
// The head is on kwok's node, so its eviction is played (workload_test.go's evictedHead); the
// watchdog, its image, its probes and its logs are real. About 2 minutes.
func TestWatchdogImageOnRealNode(t *testing.T) {
	if syscall.Geteuid() != 0 && os.Getenv(requireRealNode) != "1" {
		t.Skip("the real node needs root (docs/sandbox.md)")
	}
	kc := sandboxUp(t, "v1.1.1", "--real-node")
	restCfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	api, err := url.Parse(restCfg.Host)
	if err != nil || !net.ParseIP(api.Hostname()).IsLoopback() {
		t.Fatalf("the sandbox's API server %q is not on loopback", restCfg.Host)
	}
	image := importReleaseImage(t)
	s := newSandboxClients(t, kc)
	ctx := s.ctx
	const ns, release, rayNS = "kubectl-ray", "kubectl-ray-heal", "ray"
	metricsPort := freePort(t)

	packets := watchPackets(t)
	cfg, ch, cs := helmFor(t, kc, ns)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = release, ns, true
	in.WaitStrategy = kube.HookOnlyStrategy // waited for below, pod by pod
	values := map[string]any{
		"image":       map[string]any{"repository": image.repository, "tag": image.tag, "pullPolicy": "Never"},
		"hostNetwork": true,
		"env": []any{
			map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": api.Hostname()},
			map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": api.Port()},
		},
		"nodeSelector": map[string]any{realNodeLabel: "true"},
		"tolerations":  []any{map[string]any{"key": realNodeLabel, "operator": "Exists", "effect": "NoSchedule"}},
		"metrics":      map[string]any{"port": metricsPort},
		"heal":         map[string]any{"minAge": "0s"},
	}
	if _, err := in.Run(ch, values); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			un := action.NewUninstall(cfg)
			un.WaitStrategy = kube.HookOnlyStrategy
			if _, err := un.Run(release); err != nil {
				t.Logf("helm uninstall after a failure: %v", err)
			}
		}
	})

	// One replica leads on the real node, Ready by its probes; the other waits.
	first := waitLeader(t, s, ns, "")
	t.Logf("leader %s (%s), on %s", first.pod.Name, first.identity, first.pod.Spec.NodeName)
	// The runtime names the image by its config's digest: the one in the layout just built.
	if c := first.pod.Status.ContainerStatuses[0]; c.ImageID != image.config || c.Image != image.normalized {
		t.Errorf("the leader runs image %s (%s), want %s (%s)", c.Image, c.ImageID, image.normalized, image.config)
	}
	standby := otherPods(t, s, ns, first.pod.Name)
	for _, p := range standby {
		t.Logf("standby %s: %s %s", p.Name, p.Status.Phase, podCondition(&p, corev1.PodScheduled))
	}
	m := scrapeThroughKubelet(t, restCfg, ns, first.pod.Name, metricsPort)
	if v, _ := sampleValue(m, "kubectl_ray_heal_leader"); v != "1" {
		t.Errorf("the leader's kubectl_ray_heal_leader is %q, want 1", v)
	}

	// A head evicted on KubeRay v1.1.1: the leader deletes it, once.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rayNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	createRayCluster(ctx, t, s.dyn, rayNS)
	h1 := evictedHead(ctx, t, cs, rayNS)
	healedBy(t, s, first, h1)
	m = scrapeThroughKubelet(t, restCfg, ns, first.pod.Name, metricsPort)
	if v, _ := sampleValue(m, "kubectl_ray_heal_heals_total", `result="deleted"`, `rule="head-evicted"`); v != "1" {
		t.Errorf("after one heal the leader's kubectl_ray_heal_heals_total{result=deleted} is %q, want 1", v)
	}
	firstLog := podLog(t, s, ns, first.pod.Name)

	// The leader's pod goes (SIGTERM: it gives up the Lease); the other replica takes over.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, first.pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	second := waitLeader(t, s, ns, first.identity)
	t.Logf("leader after the delete: %s (%s), %s after it", second.pod.Name, second.identity, time.Since(deleted).Round(100*time.Millisecond))
	if second.pod.Name == first.pod.Name {
		t.Fatalf("the Lease is still %s's", first.pod.Name)
	}
	h2 := evictedHead(ctx, t, cs, rayNS)
	healedBy(t, s, second, h2)
	// Neither heal twice: one pair of Events for each evicted head, and each leader's log
	// deletes only its own.
	for _, h := range []corev1.Pod{h1, h2} {
		if onPod, onCluster, err := healEvents(ctx, cs, h); err != nil || onPod != 1 || onCluster != 1 {
			t.Errorf("RayHeadHealed Events about %s: %d on the pod, %d on the RayCluster (%v), want 1 and 1", h.Name, onPod, onCluster, err)
		}
	}
	secondLog := podLog(t, s, ns, second.pod.Name)
	for _, l := range []struct{ pod, log string }{{first.pod.Name, firstLog}, {second.pod.Name, secondLog}} {
		for _, line := range strings.Split(l.log, "\n") {
			if strings.Contains(line, `"msg":"became leader`) || strings.Contains(line, `"msg":"watching"`) || strings.Contains(line, `"result":"deleted"`) {
				t.Logf("%s: %s", l.pod, line)
			}
		}
	}
	// Its liveness probe never failed it.
	if p, err := cs.CoreV1().Pods(ns).Get(ctx, second.pod.Name, metav1.GetOptions{}); err != nil || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("the second leader restarted: %v %+v", err, p.Status.ContainerStatuses)
	}
	for _, c := range []struct {
		log  string
		mine corev1.Pod
	}{{firstLog, h1}, {secondLog, h2}} {
		if n := strings.Count(c.log, `"result":"deleted"`); n != 1 || !strings.Contains(c.log, `"uid":"`+string(c.mine.UID)+`"`) {
			t.Errorf("a leader's log has %d deletes, want one, of %s:\n%s", n, c.mine.Name, c.log)
		}
	}

	un := action.NewUninstall(cfg)
	un.WaitStrategy = kube.HookOnlyStrategy
	if _, err := un.Run(release); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	uninstalled = true
	if left := leftAfterUninstall(ctx, t, cs, ns, release); len(left) > 0 {
		t.Errorf("after uninstall, still there: %s", strings.Join(left, ", "))
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, nil
	}); err != nil {
		t.Errorf("the watchdog's pods are still there a minute after uninstall")
	}
	left, loopback := packets.stopAndReport()
	if len(left) > 0 {
		t.Errorf("frames left the machine while the watchdog ran (loopback only, ever):\n%s", strings.Join(left, "\n"))
	}
	if loopback == 0 {
		t.Error("the packet watch saw no frame even on loopback: it saw nothing")
	}
	t.Logf("frames on loopback while the watchdog ran: %d; on any other interface: %d", loopback, len(left))
}

// leader is the replica holding the Lease.
type leader struct {
	pod      corev1.Pod
	identity string
}

// waitLeader waits for a pod of the release on the real node that is Running and Ready (its
// readiness probe, served by the watchdog) and whose log says it became leader, with an identity
// other than not, and for the Lease to name it.
func waitLeader(t *testing.T, s *sandboxClients, ns, not string) leader {
	t.Helper()
	var got leader
	var last string
	err := wait.PollUntilContextTimeout(s.ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := s.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubectl-ray.io/watchdog=kubectl-ray-heal"})
		if err != nil {
			return false, nil
		}
		last = ""
		for _, p := range l.Items {
			last += fmt.Sprintf("%s: %s ready=%v node=%q; ", p.Name, p.Status.Phase, runningReady(&p), p.Spec.NodeName)
			if p.DeletionTimestamp != nil || !runningReady(&p) {
				continue
			}
			log, err := s.cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "heal"}).DoRaw(ctx)
			if err != nil {
				continue
			}
			// The Lease names the pod (POD_NAME), not the host's name its hostname is here.
			id := identityIn(string(log))
			if id == "" || id == not || !strings.HasPrefix(id, p.Name+"_") {
				continue
			}
			if holder := s.leaseHolder(t, ns); holder != id {
				continue
			}
			got = leader{pod: p, identity: id}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no new leader Ready on the real node within 2m: %s\n%s", last, eventsIn(s, ns))
	}
	return got
}

var becameLeader = regexp.MustCompile(`"msg":"became leader; acting"[^\n]*"identity":"([^"]+)"`)

func identityIn(log string) string {
	if m := becameLeader.FindStringSubmatch(log); m != nil {
		return m[1]
	}
	return ""
}

// otherPods are the release's pods but name.
func otherPods(t *testing.T, s *sandboxClients, ns, name string) []corev1.Pod {
	t.Helper()
	l, err := s.cs.CoreV1().Pods(ns).List(s.ctx, metav1.ListOptions{LabelSelector: "kubectl-ray.io/watchdog=kubectl-ray-heal"})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}

// healedBy waits until l has healed the evicted head h: its log says it deleted h (by UID),
// the pod is gone, and the RayHeadHealed Events about it are recorded.
func healedBy(t *testing.T, s *sandboxClients, l leader, h corev1.Pod) {
	t.Helper()
	err := wait.PollUntilContextTimeout(s.ctx, 300*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		log := podLog(t, s, l.pod.Namespace, l.pod.Name)
		if !strings.Contains(log, `"result":"deleted"`) || !strings.Contains(log, `"uid":"`+string(h.UID)+`"`) {
			return false, nil
		}
		onPod, onCluster, err := healEvents(ctx, s.cs, h)
		return err == nil && onPod == 1 && onCluster == 1, nil
	})
	if err != nil {
		t.Fatalf("%s did not heal %s/%s within 60s; its log:\n%s", l.pod.Name, h.Namespace, h.Name, podLog(t, s, l.pod.Namespace, l.pod.Name))
	}
}

// podLog is the watchdog container's log, read through the API server from the real kubelet.
func podLog(t *testing.T, s *sandboxClients, ns, pod string) string {
	t.Helper()
	b, err := s.cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: "heal"}).DoRaw(s.ctx)
	if err != nil {
		t.Fatalf("the log of %s/%s: %v", ns, pod, err)
	}
	return string(b)
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) string {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Message)
		}
	}
	return ""
}

func eventsIn(s *sandboxClients, ns string) string {
	l, err := s.cs.CoreV1().Events(ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range l.Items {
		fmt.Fprintf(&b, "%s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}

// scrapeThroughKubelet reads the pod's /metrics through the API server and the real kubelet's
// port-forward, as `kubectl port-forward` does.
func scrapeThroughKubelet(t *testing.T, cfg *rest.Config, ns, pod string, port int) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("port-forward to %s/%s:%d: %v", ns, pod, port, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("port-forward to %s/%s:%d: not ready in 30s", ns, pod, port)
	}
	ports, err := fw.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := scrape(ctx, "127.0.0.1:"+strconv.Itoa(int(ports[0].Local)))
	if err != nil {
		t.Fatalf("scraping %s/%s through port-forward: %v", ns, pod, err)
	}
	return m
}

// freePort is a TCP port free on this machine now: the watchdog's metrics port on the host's
// network.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// releaseImage is the image as the real node's containerd knows it.
type releaseImage struct {
	repository, tag, digest string
	ref                     string // repository:tag, as the chart names it
	normalized              string // with the default registry, as the kubelet names it
	config                  string // this platform's config digest, the runtime's image ID
}

// importReleaseImage builds the release image for this machine's platform and imports it into
// the real node's containerd: the binary built as .goreleaser.yaml builds it (CGO off,
// -trimpath, stripped, the version and commit stamped), a dist/ in GoReleaser's shape around it
// (metadata.json, artifacts.json), `hack/release/image build -platform linux/ARCH` (a release
// builds both platforms; this machine runs one), the OCI layout as a tar, `ctr images import`.
func importReleaseImage(t *testing.T) releaseImage {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	commit, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	sha := strings.TrimSpace(string(commit))
	proj := t.TempDir()
	dist := filepath.Join(proj, "dist")
	bin := filepath.Join(dist, "kubectl-ray_linux_"+runtime.GOARCH, "kubectl-ray")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "-ldflags",
		"-s -w -X github.com/kubectl-ray/kubectl-ray/pkg/version.Version="+imageTag+
			" -X github.com/kubectl-ray/kubectl-ray/pkg/version.Commit="+sha[:7],
		"github.com/kubectl-ray/kubectl-ray/cmd/kubectl-ray")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-ray: %v\n%s", err, out)
	}
	writeJSON(t, filepath.Join(dist, "metadata.json"), map[string]string{"version": strings.TrimPrefix(imageTag, "v"), "commit": sha})
	writeJSON(t, filepath.Join(dist, "artifacts.json"), []map[string]string{{"type": "Binary", "path": "dist/kubectl-ray_linux_" + runtime.GOARCH + "/kubectl-ray", "goos": "linux", "goarch": runtime.GOARCH}})
	layout := filepath.Join(proj, "image")
	img := exec.Command("go", "run", "./hack/release/image", "build", "-dist", dist, "-out", layout, "-platform", "linux/"+runtime.GOARCH)
	img.Dir = root
	img.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+commitTime(t, root, sha))
	out, err := img.Output()
	if err != nil {
		t.Fatalf("hack/release/image build: %v\n%s", err, out)
	}
	// "image: REPOSITORY:TAG@DIGEST (platforms) in DIR"
	m := regexp.MustCompile(`^image: (\S+):(\S+)@(sha256:[0-9a-f]{64}) `).FindStringSubmatch(string(out))
	if m == nil || m[2] != imageTag {
		t.Fatalf("hack/release/image build said %q", out)
	}
	ri := releaseImage{repository: m[1], tag: m[2], digest: m[3], ref: m[1] + ":" + m[2]}
	tarPath := filepath.Join(proj, "image.tar")
	if err := tarDir(layout, tarPath); err != nil {
		t.Fatal(err)
	}
	// The kubelet asks containerd for the normalized name of the chart's image (a name with no
	// registry gets the default one); the layout's index names only the tag.
	normalized := ri.repository
	if first, _, _ := strings.Cut(normalized, "/"); !strings.ContainsAny(first, ".:") && first != "localhost" {
		normalized = "docker.io/" + normalized
	}
	ri.normalized = normalized + ":" + ri.tag
	if ri.config, err = platformConfig(layout, ri.digest); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command("ctr", "--address", containerdSocket, "-n", "k8s.io", "images", "import", "--base-name", normalized, tarPath)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
	t.Logf("image %s@%s imported into the real node's containerd", ri.ref, ri.digest)
	return ri
}

// platformConfig is the config digest of this machine's platform's image in the index of the
// OCI layout at dir.
func platformConfig(dir, index string) (string, error) {
	blob := func(digest string, v any) error {
		b, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:")))
		if err != nil {
			return err
		}
		return json.Unmarshal(b, v)
	}
	var idx struct {
		Manifests []struct {
			Digest   string
			Platform struct{ OS, Architecture string }
		}
	}
	if err := blob(index, &idx); err != nil {
		return "", err
	}
	for _, m := range idx.Manifests {
		if m.Platform.OS == "linux" && m.Platform.Architecture == runtime.GOARCH {
			var man struct{ Config struct{ Digest string } }
			if err := blob(m.Digest, &man); err != nil {
				return "", err
			}
			return man.Config.Digest, nil
		}
	}
	return "", fmt.Errorf("the image index %s has no linux/%s image", index, runtime.GOARCH)
}

func commitTime(t *testing.T, root, sha string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "show", "-s", "--format=%ct", sha).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tarDir writes dir's files into a tar at path, named relative to dir (an OCI layout as `ctr
// images import` reads it).
func tarDir(dir, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, _ = filepath.Rel(dir, p)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
