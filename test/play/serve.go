package play

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// ServePort is the port of Ray Serve's HTTP proxy in every Ray pod, and of the serve Service.
const ServePort = 8000

// serveOutage is when the stand-in Serve proxies answer 502: for length after the scene saw a
// head of the cluster being killed (its deletionTimestamp set, or the pod gone). It plays what
// Ray Serve does when the head restarts without GCS fault tolerance: every proxy loses the
// controller and fails requests until the applications are redeployed.
type serveOutage struct {
	mu     sync.Mutex
	start  time.Time
	length time.Duration
}

func (o *serveOutage) open(at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.start.IsZero() || at.Sub(o.start) > o.length {
		o.start = at
	}
}

func (o *serveOutage) failing(at time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.start.IsZero() && !at.Before(o.start) && at.Sub(o.start) < o.length
}

// Served is one answer a stand-in gave, stamped on this machine's clock.
type Served struct {
	At   time.Time
	Code int

	health bool // a /-/healthz check, not a request to an application
}

// RayServeStandIn plays one pod's Ray Serve HTTP proxy on its own loopback port: 200, or 502
// during the outage after a head kill. kwok's PortForward object for the pod maps the pod's port
// 8000 here, so a port-forward to the pod through the API server reaches it, and every answer is
// attributed to exactly one pod.
type RayServeStandIn struct {
	Pod  string
	Port int

	outage *serveOutage
	srv    *http.Server
	mu     sync.Mutex
	log    []Served
}

func startRayServeStandIn(pod string, o *serveOutage) (*RayServeStandIn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("stand-in Serve proxy for %s: %v", pod, err)
	}
	s := &RayServeStandIn{Pod: pod, Port: ln.Addr().(*net.TCPAddr).Port, outage: o}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		now := time.Now()
		code := http.StatusOK
		if s.outage.failing(now) {
			code = http.StatusBadGateway
		}
		s.mu.Lock()
		s.log = append(s.log, Served{At: now, Code: code})
		s.mu.Unlock()
		rw.WriteHeader(code)
		fmt.Fprintf(rw, "%s %d\n", pod, code)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// since returns the answers given at or after t.
func (s *RayServeStandIn) since(t time.Time) []Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Served
	for _, a := range s.log {
		if !a.At.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// ServeSceneOptions tunes a ServeScene.
type ServeSceneOptions struct {
	// Outage is how long every stand-in answers 502 after the scene sees a head killed.
	Outage time.Duration
	// Observe, when set, is called with every pod event the scene's watch sees, stamped when
	// the watch saw it, before the scene acts on it (tests time the command's report with it).
	Observe func(p *corev1.Pod, deleted bool, at time.Time)
	// Logf, when set, receives what the scene tolerates (a label on a pod being deleted) and
	// its errors as they happen; Err returns the errors too.
	Logf func(format string, args ...any)
}

// ServeScene is a RayService-shaped setup around a RayCluster the real operator runs: a serve
// Service selecting the cluster's pods labelled ray.io/serve=true, a RayServeStandIn and a kwok
// PortForward per pod. Its pod watch plays the RayService controller: a pod gets
// ray.io/serve=true once it is Ready, as KubeRay labels pods whose Serve proxy is healthy.
type ServeScene struct {
	Namespace, Cluster, Service string

	kube   kubernetes.Interface
	ap     *sandbox.Applier
	outage *serveOutage
	opts   ServeSceneOptions
	stop   context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	standIns map[string]*RayServeStandIn
	killed   map[string]bool
	errs     []error
}

// StartServeScene creates the serve Service named CLUSTER-serve-svc in ns and starts the pod
// watch; admin must be allowed to create kwok's PortForward objects. Close ends it.
func StartServeScene(ctx context.Context, kube kubernetes.Interface, admin *rest.Config, ns, cluster string, opts ServeSceneOptions) (*ServeScene, error) {
	ap, err := sandbox.NewApplier(admin)
	if err != nil {
		return nil, err
	}
	sc := &ServeScene{Namespace: ns, Cluster: cluster, Service: cluster + "-serve-svc", kube: kube, ap: ap,
		outage: &serveOutage{length: opts.Outage}, opts: opts, done: make(chan struct{}),
		standIns: map[string]*RayServeStandIn{}, killed: map[string]bool{}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: sc.Service, Namespace: ns, Labels: map[string]string{"ray.io/serve": cluster + "-serve"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"ray.io/cluster": cluster, "ray.io/serve": "true"},
			Ports:    []corev1.ServicePort{{Name: "serve", Port: ServePort, TargetPort: intstr.FromInt32(ServePort)}},
		},
	}
	if _, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("serve Service %s: %v", sc.Service, err)
	}
	wctx, stop := context.WithCancel(ctx)
	w, err := kube.CoreV1().Pods(ns).Watch(wctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + cluster})
	if err != nil {
		stop()
		return nil, fmt.Errorf("watching the pods of %s: %v", cluster, err)
	}
	sc.stop = stop
	go func() {
		defer close(sc.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			now := time.Now()
			if p, ok := ev.Object.(*corev1.Pod); ok {
				sc.observe(p, ev.Type == watch.Deleted, now)
			}
		}
	}()
	return sc, nil
}

func (sc *ServeScene) observe(p *corev1.Pod, deleted bool, now time.Time) {
	if sc.opts.Observe != nil {
		sc.opts.Observe(p, deleted, now)
	}
	sc.mu.Lock()
	// Only the first sight of a head's end opens the outage: a later event of the same pod
	// (its deletion completing) is not a second kill.
	if (deleted || p.DeletionTimestamp != nil) && !sc.killed[p.Name] {
		sc.killed[p.Name] = true
		if p.Labels["ray.io/node-type"] == "head" {
			sc.outage.open(now)
		}
	}
	s, has := sc.standIns[p.Name]
	sc.mu.Unlock()
	if deleted {
		return
	}
	if !has {
		var err error
		if s, err = startRayServeStandIn(p.Name, sc.outage); err != nil {
			sc.fail(err)
			return
		}
		sc.mu.Lock()
		sc.standIns[p.Name] = s
		sc.mu.Unlock()
		sc.portForward(p.Name, s.Port)
	}
	ready := p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podutils.IsPodReady(p)
	if ready && p.Labels["ray.io/serve"] != "true" {
		// Background, not the scene's context: Close waits for this call rather than cut it.
		patch := []byte(`{"metadata":{"labels":{"ray.io/serve":"true"}}}`)
		if _, err := sc.kube.CoreV1().Pods(sc.Namespace).Patch(context.Background(), p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			sc.logf("labelling %s ray.io/serve=true: %v", p.Name, err)
		}
	}
}

// portForward creates kwok's PortForward object for pod: its port 8000 goes to the stand-in.
func (sc *ServeScene) portForward(pod string, port int) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
		"metadata": map[string]any{"name": pod, "namespace": sc.Namespace},
		"spec": map[string]any{"forwards": []any{map[string]any{
			"ports":  []any{int64(ServePort)},
			"target": map[string]any{"address": "127.0.0.1", "port": int64(port)},
		}}},
	}}
	if _, err := sc.ap.CreateObject(context.Background(), obj, sc.Namespace); err != nil {
		sc.fail(fmt.Errorf("PortForward for %s: %v", pod, err))
	}
}

func (sc *ServeScene) fail(err error) {
	sc.mu.Lock()
	sc.errs = append(sc.errs, err)
	sc.mu.Unlock()
	sc.logf("serve scene: %v", err)
}

func (sc *ServeScene) logf(format string, args ...any) {
	if sc.opts.Logf != nil {
		sc.opts.Logf(format, args...)
	}
}

// Err returns every error the scene met since it started (a stand-in it could not start, a
// PortForward it could not create), or nil.
func (sc *ServeScene) Err() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return errors.Join(sc.errs...)
}

// WaitServing waits until the Service has n ready endpoints (every pod labelled and ready).
func (sc *ServeScene) WaitServing(ctx context.Context, n int, timeout time.Duration) error {
	var ready int
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := sc.kube.DiscoveryV1().EndpointSlices(sc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + sc.Service})
		if last = err; err != nil {
			return false, nil
		}
		ready = 0
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready++
				}
			}
		}
		return ready == n, nil
	})
	if err != nil {
		return fmt.Errorf("%d ready endpoints behind %s after %s, want %d (last error: %v; scene: %v)", ready, sc.Service, timeout, n, last, sc.Err())
	}
	return nil
}

// Tally is what every stand-in answered since t: per pod per status code, in total, and every
// answer in time order.
func (sc *ServeScene) Tally(t time.Time) (perPod map[string]map[string]int, total map[string]int, all []Served) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	perPod, total = map[string]map[string]int{}, map[string]int{}
	for name, s := range sc.standIns {
		for _, a := range s.since(t) {
			c := fmt.Sprint(a.Code)
			if perPod[name] == nil {
				perPod[name] = map[string]int{}
			}
			perPod[name][c]++
			total[c]++
			all = append(all, a)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	return perPod, total, all
}

// Close stops the pod watch, waits for what it was doing, and closes every stand-in. The
// Service, labels and PortForward objects stay (they go with the namespace).
func (sc *ServeScene) Close() {
	sc.stop()
	<-sc.done
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.standIns {
		_ = s.srv.Close()
	}
}
