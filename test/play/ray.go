package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// DashboardPort is the Ray dashboard's port on the head (the head Service's "dashboard" port).
const DashboardPort = 8265

// What the Ray stand-ins play, each named where a test relies on it (docs/sandbox.md lists them).
const (
	// PlayDashboardServeAPI: the head's dashboard answers the Serve REST API the way KubeRay's
	// dashboard client reads it: GET /api/serve/applications/?api_type=declarative returns the
	// applications of the last PUT /api/serve/applications/ with their deployments.
	PlayDashboardServeAPI = "dashboard: GET/PUT /api/serve/applications/ on the head"
	// PlayAppsStartDeploying: a PUT application is DEPLOYING, then RUNNING after DeployTime
	// (never, for a cluster NeverRunning names).
	PlayAppsStartDeploying = "apps DEPLOYING, then RUNNING after the deploy time"
	// PlayHeadRestartLosesApps: a new head (no GCS fault tolerance) starts with no Serve
	// applications: the dashboard lists none until KubeRay submits them again.
	PlayHeadRestartLosesApps = "a new head has no Serve apps until they are submitted again"
	// PlayProxyHealth: every pod's Serve proxy answers /-/healthz 200 "success" while Serve runs
	// in its cluster, 503 before the first deployment and while the apps are gone.
	PlayProxyHealth = "proxy /-/healthz: 200 while Serve runs, 503 otherwise"
	// PlayProxyLostController: a proxy that outlived its head (a worker's) answers 502 on every
	// application route until the apps are redeployed to the new head (kuberay #1153, seed 003).
	PlayProxyLostController = "proxies that lost their controller answer 502 until the apps are redeployed"
	// PlayProxyRoutes: application routes answer 200 when the app is RUNNING, 503 while it is
	// not, 404 for a path no app's route prefix matches.
	PlayProxyRoutes = "proxy routes: 200 RUNNING, 503 not RUNNING, 404 unknown"
	// PlayPodLifetime: the stand-ins of a pod answer from when it is Running with an IP until its
	// deletion starts (a killed container stops answering: connection refused).
	PlayPodLifetime = "stand-ins answer from Running until deletion starts"
)

// RayOptions tunes the Ray stand-ins.
type RayOptions struct {
	// DeployTime is how long a submitted application stays DEPLOYING.
	DeployTime time.Duration
	// NeverRunning, when set and true for a RayCluster's name, keeps its applications DEPLOYING
	// forever (an upgrade whose new cluster never becomes ready).
	NeverRunning func(cluster string) bool
	// JobRunTime is how long a submitted Ray job runs before it ends (PlayJobsRun); 0 runs it
	// until the test ends.
	JobRunTime time.Duration
	// FailJobs, when set and true for a RayCluster's name, ends its Ray jobs FAILED.
	FailJobs func(cluster string) bool
	// Demands, when set, is what a RayCluster's autoscaler has waiting (PlayAutoscalerStatus):
	// resource shapes and how many wait for each. Unset, no autoscaler reports.
	Demands func(cluster string) []Demand
	// GCSDown, when set and true for a RayCluster's name, has its dashboard answer the GCS health
	// check 503 (PlayGCSDown).
	GCSDown func(cluster string) bool
	// DashboardDelay, when set, is how long the head's dashboard waits before each answer (a slow
	// dashboard, for benchmarks).
	DashboardDelay func() time.Duration
	// ReplicaWorkers, when positive, is how many of a cluster's running workers (the first by
	// name) Serve's replicas are placed on (PlayServeReplicas); 0 places them on all.
	ReplicaWorkers int
	// FailApps, when set, names the applications of a RayCluster that fail to deploy
	// (PlayAppsDeployFailed), with Ray's message.
	FailApps func(cluster, app string) (message string, failed bool)
	// Logf receives what the stand-ins do and their errors.
	Logf func(format string, args ...any)
}

// Ray plays Ray for the RayClusters of one namespace in a ServeNetwork sandbox: for each Ray pod
// it serves a Serve proxy (the pod's port 8000), and on the head a dashboard (8265), each on a
// free loopback port, and creates kwok's PortForward for the pod mapping those pod ports there.
// A port-forward to the pod reaches them through the API server and kwok; the real operator
// reaches the dashboard through the head Service's DNS name and the head's Serve proxy at its
// pod IP, both through the sandbox's pod network (Config.ServeNetwork), which reads the same
// PortForward.
type Ray struct {
	Namespace string

	kube kubernetes.Interface
	ap   *sandbox.Applier
	opts RayOptions
	stop context.CancelFunc
	done chan struct{}

	mu       sync.Mutex
	clusters map[string]*rayCluster
	nodes    map[string]*rayNode // pod name -> stand-ins
	// nodeStates overrides what Ray's node table says of a pod (PlayNodeTable): "DEAD", or ""
	// for a pod Ray never saw.
	nodeStates map[string]string
	errs       []error
}

// rayCluster is the Serve state of one RayCluster: it lives in the GCS, on the head.
type rayCluster struct {
	head     string // pod name of the head whose GCS holds this state
	epoch    int    // incremented on every new head
	apps     map[string]*serveApp
	deployed time.Time             // last PUT
	jobs     map[string]*rayJobRun // by submission_id (PlayJobsRun)
}

type serveApp struct {
	Name        string
	RoutePrefix string
	Deployments []string
	Submitted   time.Time
}

// rayNode is the stand-ins of one pod.
type rayNode struct {
	pod, cluster string
	head         bool
	ip           string
	image        string // of its Ray container (the dashboard's version: PlayDashboardStateAPI)
	// asksToken and token are a head's token authentication (PlayDashboardTokenAuth).
	asksToken bool
	token     string
	epoch     int // the head epoch it started under
	servers   []*http.Server
	log       []Served
}

// StartRay starts the pod watch of namespace ns. admin must be allowed to create kwok's
// PortForward objects. Close stops it and every stand-in.
func StartRay(ctx context.Context, kube kubernetes.Interface, admin *rest.Config, ns string, opts RayOptions) (*Ray, error) {
	ap, err := sandbox.NewApplier(admin)
	if err != nil {
		return nil, err
	}
	r := &Ray{Namespace: ns, kube: kube, ap: ap, opts: opts, done: make(chan struct{}),
		clusters: map[string]*rayCluster{}, nodes: map[string]*rayNode{}, nodeStates: map[string]string{}}
	wctx, stop := context.WithCancel(ctx)
	w, err := kube.CoreV1().Pods(ns).Watch(wctx, metav1.ListOptions{LabelSelector: "ray.io/is-ray-node=yes"})
	if err != nil {
		stop()
		return nil, fmt.Errorf("watching the Ray pods of %s: %v", ns, err)
	}
	r.stop = stop
	go func() {
		defer close(r.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				r.observe(p, ev.Type == watch.Deleted)
			}
		}
	}()
	return r, nil
}

func (r *Ray) observe(p *corev1.Pod, deleted bool) {
	r.mu.Lock()
	n := r.nodes[p.Name]
	r.mu.Unlock()
	if deleted || p.DeletionTimestamp != nil {
		if n != nil {
			r.stopNode(n) // PlayPodLifetime
			r.headGone(n)
		}
		return
	}
	if n != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
		return
	}
	cluster := p.Labels["ray.io/cluster"]
	head := p.Labels["ray.io/node-type"] == "head"
	r.mu.Lock()
	c := r.clusters[cluster]
	if c == nil {
		c = &rayCluster{apps: map[string]*serveApp{}}
		r.clusters[cluster] = c
	}
	if head {
		c.newHead(p.Name)
	}
	n = &rayNode{pod: p.Name, cluster: cluster, head: head, ip: p.Status.PodIP, epoch: c.epoch}
	if len(p.Spec.Containers) > 0 {
		n.image = p.Spec.Containers[0].Image
	}
	r.nodes[p.Name] = n
	r.mu.Unlock()
	if head {
		n.token, n.asksToken = r.headToken(p)
	}

	forwards := map[int]int{} // pod port -> local port
	servePort := containerPort(p, "serve", ServePort)
	local, err := r.listen(n, http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) { r.proxy(n, rw, req) }))
	if err != nil {
		r.fail(err)
		return
	}
	forwards[servePort] = local
	if head {
		local, err := r.listen(n, http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) { r.dashboard(n, rw, req) }))
		if err != nil {
			r.fail(err)
			return
		}
		forwards[containerPort(p, "dashboard", DashboardPort)] = local
	}
	r.portForward(p.Name, forwards)
	r.logf("ray stand-ins: %s (%s of %s, pod IP %s): ports %v", p.Name, map[bool]string{true: "head", false: "worker"}[head], cluster, n.ip, forwards)
}

// newHead is PlayHeadRestartLosesApps: a new GCS, no Serve applications and no Ray jobs.
func (c *rayCluster) newHead(pod string) {
	c.head, c.epoch, c.apps, c.jobs = pod, c.epoch+1, map[string]*serveApp{}, map[string]*rayJobRun{}
}

// headGone: the deletion of the head n started. The Serve controller lived on it
// (PlayHeadRestartLosesApps); every other proxy has lost it (PlayProxyLostController).
func (r *Ray) headGone(n *rayNode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clusters[n.cluster]; n.head && c.head == n.pod && len(c.apps) > 0 {
		c.apps, c.epoch = map[string]*serveApp{}, c.epoch+1
	}
}

func containerPort(p *corev1.Pod, name string, def int) int {
	if len(p.Spec.Containers) > 0 {
		for _, cp := range p.Spec.Containers[0].Ports {
			if cp.Name == name {
				return int(cp.ContainerPort)
			}
		}
	}
	return def
}

// listen serves h on a free loopback port and returns the port.
func (r *Ray) listen(n *rayNode, h http.Handler) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("stand-in for %s: %v", n.pod, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	n.servers = append(n.servers, srv)
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (r *Ray) stopNode(n *rayNode) {
	r.mu.Lock()
	servers := n.servers
	n.servers = nil
	r.mu.Unlock()
	for _, s := range servers {
		_ = s.Close()
	}
}

// proxy plays a Serve HTTP proxy.
func (r *Ray) proxy(n *rayNode, rw http.ResponseWriter, req *http.Request) {
	now := time.Now()
	r.mu.Lock()
	c := r.clusters[n.cluster]
	running := len(c.apps) > 0
	code, body := http.StatusOK, "success"
	switch {
	case req.URL.Path == "/-/healthz": // PlayProxyHealth
		if !running {
			code, body = http.StatusServiceUnavailable, "Serve is not running in this cluster"
		}
	case !running && n.epoch < c.epoch: // PlayProxyLostController
		code, body = http.StatusBadGateway, "proxy lost its Serve controller"
	default: // PlayProxyRoutes
		app := matchRoute(c.apps, req.URL.Path)
		switch {
		case app == nil:
			code, body = http.StatusNotFound, "Path '"+req.URL.Path+"' not found"
		case r.appStatus(n.cluster, app, now) != "RUNNING":
			code, body = http.StatusServiceUnavailable, "application "+app.Name+" is not running"
		default:
			body = app.Name + " from " + n.pod
		}
	}
	n.log = append(n.log, Served{At: now, Code: code, health: req.URL.Path == "/-/healthz"})
	r.mu.Unlock()
	rw.WriteHeader(code)
	fmt.Fprintln(rw, body)
}

func matchRoute(apps map[string]*serveApp, path string) *serveApp {
	var best *serveApp
	for _, a := range apps {
		p := strings.TrimSuffix(a.RoutePrefix, "/")
		if (path == p || strings.HasPrefix(path, p+"/") || p == "") && (best == nil || len(a.RoutePrefix) > len(best.RoutePrefix)) {
			best = a
		}
	}
	return best
}

// appStatus is PlayAppsStartDeploying. Called with r.mu held.
func (r *Ray) appStatus(cluster string, a *serveApp, now time.Time) string {
	if r.opts.NeverRunning != nil && r.opts.NeverRunning(cluster) {
		return "DEPLOYING"
	}
	if now.Sub(a.Submitted) < r.opts.DeployTime {
		return "DEPLOYING"
	}
	return "RUNNING"
}

// dashboard plays the head's dashboard: the Serve REST API (PlayDashboardServeAPI), the Jobs
// API (PlayDashboardJobsAPI) and what doctor --ray reads besides (PlayDashboardStateAPI).
func (r *Ray) dashboard(n *rayNode, rw http.ResponseWriter, req *http.Request) {
	if r.opts.DashboardDelay != nil {
		time.Sleep(r.opts.DashboardDelay())
	}
	if refused(n, rw, req) { // PlayDashboardTokenAuth
		return
	}
	if strings.HasPrefix(req.URL.Path, "/api/jobs/") {
		r.jobsAPI(n.cluster, rw, req)
		return
	}
	if r.stateAPI(n, rw, req) {
		return
	}
	if req.URL.Path != "/api/serve/applications/" {
		http.Error(rw, "not played by the sandbox's Ray stand-in", http.StatusNotFound)
		return
	}
	switch req.Method {
	case http.MethodGet:
		r.mu.Lock()
		out := serveDetails(r, n.cluster, time.Now())
		r.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(out)
	case http.MethodPut:
		var cfg struct {
			Applications []struct {
				Name        string  `json:"name"`
				Route       *string `json:"route_prefix"`
				Deployments []struct {
					Name string `json:"name"`
				} `json:"deployments"`
			} `json:"applications"`
		}
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err := json.Unmarshal(b, &cfg); err != nil {
			http.Error(rw, "bad Serve config: "+err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		apps := map[string]*serveApp{}
		for _, a := range cfg.Applications {
			prefix := "/"
			if a.Route != nil {
				prefix = *a.Route
			}
			app := &serveApp{Name: a.Name, RoutePrefix: prefix, Submitted: now}
			for _, d := range a.Deployments {
				app.Deployments = append(app.Deployments, d.Name)
			}
			apps[a.Name] = app
		}
		r.mu.Lock()
		c := r.clusters[n.cluster]
		// An app whose config is unchanged keeps running; a new one deploys.
		for name, app := range apps {
			if old := c.apps[name]; old != nil && old.RoutePrefix == app.RoutePrefix {
				app.Submitted = old.Submitted
			}
		}
		c.apps, c.deployed = apps, now
		r.mu.Unlock()
		r.logf("ray stand-ins: %d Serve apps submitted to %s", len(apps), n.cluster)
		rw.WriteHeader(http.StatusOK)
	default:
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// serveDetails is the shape of Ray's ServeInstanceDetails that KubeRay reads
// (dashboardclient.GetServeDetails: applications by name, their status and deployments).
func serveDetails(r *Ray, cluster string, now time.Time) map[string]any {
	apps := map[string]any{}
	replicas := r.placeReplicas(cluster, r.clusters[cluster].apps, func(app string) string {
		if r.appStatus(cluster, r.clusters[cluster].apps[app], now) == "RUNNING" {
			return "RUNNING"
		}
		return "STARTING"
	})
	for name, a := range r.clusters[cluster].apps {
		status := r.appStatus(cluster, a, now)
		dstatus, message, dmessage := "HEALTHY", "", ""
		if status != "RUNNING" {
			dstatus = "UPDATING"
		}
		if r.opts.FailApps != nil { // PlayAppsDeployFailed
			if m, failed := r.opts.FailApps(cluster, name); failed {
				status, dstatus, message, dmessage = "DEPLOY_FAILED", "UNHEALTHY", m, "The deployment failed to start 3 times in a row."
			}
		}
		deps := map[string]any{}
		for _, d := range a.Deployments {
			deps[d] = map[string]any{"name": d, "status": dstatus, "message": dmessage, "route_prefix": nil, "replicas": []any{}}
			if rep, ok := replicas[name+"/"+d]; ok { // PlayServeReplicas
				deps[d].(map[string]any)["replicas"] = []any{rep.details}
			}
		}
		apps[name] = map[string]any{"name": name, "route_prefix": a.RoutePrefix, "status": status, "message": message,
			"last_deployed_time_s": float64(a.Submitted.UnixNano()) / 1e9, "deployments": deps}
	}
	return map[string]any{"deploy_mode": "MULTI_APP", "applications": apps}
}

// portForward creates kwok's PortForward object for pod: each pod port goes to its stand-in on
// loopback. `kubectl port-forward` (and chaos head-kill) reach the stand-ins through the API
// server and kwok; the operator through the sandbox's pod network, which reads the same object.
func (r *Ray) portForward(pod string, forwards map[int]int) {
	var fs []any
	for podPort, local := range forwards {
		fs = append(fs, map[string]any{
			"ports":  []any{int64(podPort)},
			"target": map[string]any{"address": "127.0.0.1", "port": int64(local)},
		})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
		"metadata": map[string]any{"name": pod, "namespace": r.Namespace},
		"spec":     map[string]any{"forwards": fs},
	}}
	if _, err := r.ap.CreateObject(context.Background(), obj, r.Namespace); err != nil {
		r.fail(fmt.Errorf("PortForward for %s: %v", pod, err))
	}
}

// Apps returns the names of the Serve applications running in cluster's stand-in GCS.
func (r *Ray) Apps(cluster string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	if c := r.clusters[cluster]; c != nil {
		for name := range c.apps {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Tally is what every stand-in Serve proxy answered since t (health checks included when
// withHealth): per pod per status code, and in total.
func (r *Ray) Tally(t time.Time, withHealth bool) (perPod map[string]map[string]int, total map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	perPod, total = map[string]map[string]int{}, map[string]int{}
	for name, n := range r.nodes {
		for _, a := range n.log {
			if a.At.Before(t) || (!withHealth && a.health) {
				continue
			}
			c := strconv.Itoa(a.Code)
			if perPod[name] == nil {
				perPod[name] = map[string]int{}
			}
			perPod[name][c]++
			total[c]++
		}
	}
	return perPod, total
}

func (r *Ray) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.logf("ray stand-ins: %v", err)
}

func (r *Ray) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf(format, args...)
	}
}

// Err returns every error the stand-ins met, or nil.
func (r *Ray) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// Close stops the pod watch and every stand-in.
func (r *Ray) Close() {
	r.stop()
	<-r.done
	r.mu.Lock()
	nodes := make([]*rayNode, 0, len(r.nodes))
	for _, n := range r.nodes {
		nodes = append(nodes, n)
	}
	r.mu.Unlock()
	for _, n := range nodes {
		r.stopNode(n)
	}
}
