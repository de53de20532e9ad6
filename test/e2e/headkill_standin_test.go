package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// killWindow is when the stand-in Serve proxies answer 502: for `length` after the scene saw a
// head of the cluster being killed (its deletionTimestamp set, or the pod gone). It plays what
// Ray Serve does when the head restarts without GCS fault tolerance: every proxy loses the
// controller and fails requests until the applications are redeployed.
type killWindow struct {
	mu     sync.Mutex
	start  time.Time
	length time.Duration
}

func (k *killWindow) open(at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.start.IsZero() || at.Sub(k.start) > k.length {
		k.start = at
	}
}

func (k *killWindow) failing(at time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.start.IsZero() && !at.Before(k.start) && at.Sub(k.start) < k.length
}

// served is one answer a stand-in gave.
type served struct {
	at   time.Time
	code int
}

// serveStandIn plays one pod's Ray Serve HTTP proxy on its own loopback port: 200, or 502 inside
// the kill window. kwok's PortForward object for the pod maps the pod's port 8000 here, so the
// command's port-forward through the API server reaches it, attributed to exactly one pod.
type serveStandIn struct {
	pod    string
	port   int
	window *killWindow
	srv    *http.Server

	mu  sync.Mutex
	log []served
}

func newServeStandIn(t *testing.T, pod string, w *killWindow) *serveStandIn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &serveStandIn{pod: pod, port: ln.Addr().(*net.TCPAddr).Port, window: w}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		now := time.Now()
		code := http.StatusOK
		if s.window.failing(now) {
			code = http.StatusBadGateway
		}
		s.mu.Lock()
		s.log = append(s.log, served{at: now, code: code})
		s.mu.Unlock()
		rw.WriteHeader(code)
		fmt.Fprintf(rw, "%s %d\n", pod, code)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// since returns the answers given at or after t.
func (s *serveStandIn) since(t time.Time) []served {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []served
	for _, a := range s.log {
		if !a.at.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// apiSeen is when the scene's own watch saw something happen to a pod (the API's view, on this
// machine's clock) next to the API's own second-resolution timestamp.
type apiSeen struct {
	at  time.Time
	api time.Time
}

// serveScene is the RayService-shaped setup: a RayCluster run by the real operator, a serve
// Service selecting its pods with ray.io/serve=true, a stand-in proxy and a kwok PortForward per
// pod. Its pod watch plays the RayService controller: a pod gets ray.io/serve=true once it is
// Ready and its proxy is reachable, as KubeRay labels pods whose Serve proxy is healthy.
type serveScene struct {
	h       *H
	ap      *sandbox.Applier
	cluster string
	service string
	window  *killWindow

	mu       sync.Mutex
	standIns map[string]*serveStandIn
	heads    map[types.UID]string
	created  map[string]apiSeen // pod -> first seen
	running  map[string]apiSeen
	ready    map[string]apiSeen
	killed   map[string]apiSeen // pod -> deletionTimestamp (or deletion) first seen
	gone     map[string]time.Time
}

var portForwardGVR = "kwok.x-k8s.io/v1alpha1"

func newServeScene(h *H, cluster string, window time.Duration) *serveScene {
	h.T.Helper()
	sc := &serveScene{h: h, cluster: cluster, service: cluster + "-serve-svc", window: &killWindow{length: window},
		standIns: map[string]*serveStandIn{}, heads: map[types.UID]string{}, created: map[string]apiSeen{},
		running: map[string]apiSeen{}, ready: map[string]apiSeen{}, killed: map[string]apiSeen{}, gone: map[string]time.Time{}}
	ap, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		h.T.Fatal(err)
	}
	sc.ap = ap
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: sc.service, Namespace: h.NS, Labels: map[string]string{"ray.io/serve": cluster + "-serve"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"ray.io/cluster": cluster, "ray.io/serve": "true"},
			Ports:    []corev1.ServicePort{{Name: "serve", Port: 8000, TargetPort: intstr.FromInt32(8000)}},
		},
	}
	if _, err := h.Kube.CoreV1().Services(h.NS).Create(h.Ctx, svc, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	go sc.watch()
	return sc
}

func (sc *serveScene) watch() {
	h := sc.h
	w, err := h.Kube.CoreV1().Pods(h.NS).Watch(h.Ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + sc.cluster})
	if err != nil {
		h.T.Errorf("scene watch: %v", err)
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		now := time.Now()
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		sc.observe(p, ev.Type == watch.Deleted, now)
	}
}

func (sc *serveScene) observe(p *corev1.Pod, deleted bool, now time.Time) {
	h := sc.h
	sc.mu.Lock()
	if _, ok := sc.created[p.Name]; !ok {
		sc.created[p.Name] = apiSeen{at: now, api: p.CreationTimestamp.Time}
	}
	isHead := p.Labels["ray.io/node-type"] == "head"
	if (deleted || p.DeletionTimestamp != nil) && sc.killed[p.Name].at.IsZero() {
		api := now
		if p.DeletionTimestamp != nil {
			api = p.DeletionTimestamp.Time
		}
		sc.killed[p.Name] = apiSeen{at: now, api: api}
		if isHead {
			sc.window.open(now)
		}
	}
	if deleted {
		sc.gone[p.Name] = now
		sc.mu.Unlock()
		return
	}
	if p.Status.Phase == corev1.PodRunning {
		if _, ok := sc.running[p.Name]; !ok {
			sc.running[p.Name] = apiSeen{at: now, api: conditionTime(p, corev1.ContainersReady)}
		}
	}
	readyNow := PodRunningReady(p)
	if readyNow {
		if _, ok := sc.ready[p.Name]; !ok {
			sc.ready[p.Name] = apiSeen{at: now, api: conditionTime(p, corev1.PodReady)}
		}
	}
	_, has := sc.standIns[p.Name]
	if !has {
		sc.standIns[p.Name] = newServeStandIn(h.T, p.Name, sc.window)
	}
	s := sc.standIns[p.Name]
	labelled := p.Labels["ray.io/serve"] == "true"
	sc.mu.Unlock()

	if !has {
		sc.portForward(p.Name, s.port)
	}
	if readyNow && !labelled && p.DeletionTimestamp == nil {
		patch := []byte(`{"metadata":{"labels":{"ray.io/serve":"true"}}}`)
		if _, err := h.Kube.CoreV1().Pods(h.NS).Patch(context.Background(), p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			h.T.Logf("labelling %s ray.io/serve=true: %v", p.Name, err)
		}
	}
}

// portForward creates kwok's PortForward object for pod: its port 8000 goes to the stand-in.
func (sc *serveScene) portForward(pod string, port int) {
	h := sc.h
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": portForwardGVR, "kind": "PortForward",
		"metadata": map[string]any{"name": pod, "namespace": h.NS},
		"spec": map[string]any{"forwards": []any{map[string]any{
			"ports":  []any{int64(8000)},
			"target": map[string]any{"address": "127.0.0.1", "port": int64(port)},
		}}},
	}}
	if _, err := sc.ap.CreateObject(context.Background(), obj, h.NS); err != nil {
		h.T.Errorf("PortForward for %s: %v", pod, err)
	}
}

func conditionTime(p *corev1.Pod, t corev1.PodConditionType) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// waitServing waits until the Service has n ready endpoints (every pod labelled and ready).
func (sc *serveScene) waitServing(n int) {
	h := sc.h
	h.T.Helper()
	h.WaitFor(fmt.Sprintf("%d ready endpoints behind %s", n, sc.service), 60*time.Second, func() (bool, error) {
		l, err := h.Kube.DiscoveryV1().EndpointSlices(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + sc.service})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready++
				}
			}
		}
		return ready == n, nil
	})
}

// tally is what every stand-in answered since t: per pod per code, and in total.
func (sc *serveScene) tally(t time.Time) (perPod map[string]map[string]int, total map[string]int, all []served) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	perPod, total = map[string]map[string]int{}, map[string]int{}
	for name, s := range sc.standIns {
		for _, a := range s.since(t) {
			c := fmt.Sprint(a.code)
			if perPod[name] == nil {
				perPod[name] = map[string]int{}
			}
			perPod[name][c]++
			total[c]++
			all = append(all, a)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	return perPod, total, all
}

func (sc *serveScene) seen(m map[string]apiSeen, pod string) apiSeen {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return m[pod]
}

// headKillReport is the part of the JSON report the tests read.
type headKillReport struct {
	Kind  string `json:"kind"`
	Probe struct {
		Start       time.Time `json:"start"`
		KillAtMs    *float64  `json:"killAtMs"`
		Interrupted bool      `json:"interrupted"`
	} `json:"probe"`
	Totals struct {
		Requests         int            `json:"requests"`
		Status2xx        int            `json:"status2xx"`
		Status502        int            `json:"status502"`
		ConnectionErrors int            `json:"connectionErrors"`
		Timeouts         int            `json:"timeouts"`
		Errors           int            `json:"errors"`
		Aborted          int            `json:"aborted"`
		ByStatus         map[string]int `json:"byStatus"`
		ByClass          map[string]int `json:"byClass"`
	} `json:"totals"`
	ErrorWindow *struct {
		FirstMs float64 `json:"firstMs"`
		LastMs  float64 `json:"lastMs"`
	} `json:"errorWindow"`
	Recovery struct {
		OldHeadGoneMs    *float64 `json:"oldHeadGoneMs"`
		NewHeadCreatedMs *float64 `json:"newHeadCreatedMs"`
		NewHeadRunningMs *float64 `json:"newHeadRunningMs"`
		NewHeadReadyMs   *float64 `json:"newHeadReadyMs"`
		EndpointsBackMs  *float64 `json:"endpointsBackMs"`
		OldHead          string   `json:"oldHead"`
		NewHead          string   `json:"newHead"`
	} `json:"recovery"`
	Endpoints []struct {
		Name     string         `json:"name"`
		Requests int            `json:"requests"`
		Errors   int            `json:"errors"`
		ByStatus map[string]int `json:"byStatus"`
	} `json:"endpoints"`
	Events []struct {
		Kind   string  `json:"kind"`
		AtMs   float64 `json:"atMs"`
		Object string  `json:"object"`
	} `json:"events"`
	Verdict struct {
		Passed bool `json:"passed"`
	} `json:"verdict"`
}

func parseHeadKillReport(t *testing.T, res Result) *headKillReport {
	t.Helper()
	r := &headKillReport{}
	if err := json.Unmarshal([]byte(res.Stdout), r); err != nil || r.Kind != "HeadKillReport" {
		t.Fatalf("not a HeadKillReport (%v): %s", err, res)
	}
	return r
}

// at turns a report offset (ms relative to the kill) into a time.
func (r *headKillReport) at(ms float64) time.Time {
	return r.Probe.Start.Add(time.Duration((*r.Probe.KillAtMs + ms) * float64(time.Millisecond)))
}

func within(t *testing.T, what string, got, want time.Time, tol time.Duration) {
	t.Helper()
	d := got.Sub(want)
	if d < -tol || d > tol {
		t.Errorf("%s: report says %s, observed %s: off by %s (tolerance %s)", what,
			got.Format("15:04:05.000"), want.Format("15:04:05.000"), d, tol)
	} else {
		t.Logf("%s: report and observation %s apart", what, d)
	}
}

// headKillNode creates a kwok node for one test, so the head kill and its port-forwards touch
// nothing other tests run on.
func headKillNode(h *H, prefix string) string {
	h.T.Helper()
	name := prefix + "-" + h.NS
	if len(name) > 63 {
		name = name[:63]
	}
	if _, err := h.Kube.CoreV1().Nodes().Create(h.Ctx, sandbox.FakeNode(name, true), metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.WaitFor("node "+name+" Ready without taints", 60*time.Second, func() (bool, error) {
		n, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, name, metav1.GetOptions{})
		return err == nil && sandbox.NodeReady(n) && len(n.Spec.Taints) == 0, err
	})
	return name
}

// onNode pins a RayCluster's pods to node.
func onNode(node string) func(*rayv1.RayCluster) {
	return func(rc *rayv1.RayCluster) {
		sel := map[string]string{"kubernetes.io/hostname": node}
		rc.Spec.HeadGroupSpec.Template.Spec.NodeSelector = sel
		for i := range rc.Spec.WorkerGroupSpecs {
			rc.Spec.WorkerGroupSpecs[i].Template.Spec.NodeSelector = sel
		}
	}
}
