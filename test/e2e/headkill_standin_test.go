package e2e

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// served is one answer a stand-in gave.
type served struct {
	at   time.Time
	code int
}

// apiSeen is when the scene's own watch saw something happen to a pod (the API's view, on this
// machine's clock) next to the API's own second-resolution timestamp.
type apiSeen struct {
	at  time.Time
	api time.Time
}

// serveScene is play.ServeScene (the serve Service, a stand-in Ray Serve proxy and a kwok
// PortForward per pod, its pod watch playing the RayService controller; a stand-in answers 502
// for `window` after a head is killed) plus what that watch saw of each pod, which the tests hold
// the command's report against.
type serveScene struct {
	*play.ServeScene
	h       *H
	service string

	mu      sync.Mutex
	created map[string]apiSeen // pod -> first seen
	running map[string]apiSeen
	ready   map[string]apiSeen
	killed  map[string]apiSeen // pod -> deletionTimestamp (or deletion) first seen
	gone    map[string]time.Time
}

func newServeScene(h *H, cluster string, window time.Duration) *serveScene {
	h.T.Helper()
	sc := &serveScene{h: h, created: map[string]apiSeen{}, running: map[string]apiSeen{}, ready: map[string]apiSeen{},
		killed: map[string]apiSeen{}, gone: map[string]time.Time{}}
	scene, err := play.StartServeScene(h.Ctx, h.Kube, h.SB.Admin, h.NS, cluster,
		play.ServeSceneOptions{Outage: window, Observe: sc.observe, Logf: h.T.Logf})
	if err != nil {
		h.T.Fatal(err)
	}
	sc.ServeScene, sc.service = scene, scene.Service
	h.T.Cleanup(func() {
		scene.Close()
		if err := scene.Err(); err != nil {
			h.T.Errorf("serve scene: %v", err)
		}
	})
	return sc
}

// observe records, on the scene watch's clock, when each pod was created, Running, Ready, killed
// and gone.
func (sc *serveScene) observe(p *corev1.Pod, deleted bool, now time.Time) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if _, ok := sc.created[p.Name]; !ok {
		sc.created[p.Name] = apiSeen{at: now, api: p.CreationTimestamp.Time}
	}
	if (deleted || p.DeletionTimestamp != nil) && sc.killed[p.Name].at.IsZero() {
		api := now
		if p.DeletionTimestamp != nil {
			api = p.DeletionTimestamp.Time
		}
		sc.killed[p.Name] = apiSeen{at: now, api: api}
	}
	if deleted {
		sc.gone[p.Name] = now
		return
	}
	if p.Status.Phase == corev1.PodRunning {
		if _, ok := sc.running[p.Name]; !ok {
			sc.running[p.Name] = apiSeen{at: now, api: conditionTime(p, corev1.ContainersReady)}
		}
	}
	if PodRunningReady(p) {
		if _, ok := sc.ready[p.Name]; !ok {
			sc.ready[p.Name] = apiSeen{at: now, api: conditionTime(p, corev1.PodReady)}
		}
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
	sc.h.T.Helper()
	if err := sc.WaitServing(sc.h.Ctx, n, 60*time.Second); err != nil {
		sc.h.T.Fatal(err)
	}
}

// tally is what every stand-in answered since t: per pod per code, and in total.
func (sc *serveScene) tally(t time.Time) (perPod map[string]map[string]int, total map[string]int, all []served) {
	perPod, total, answers := sc.Tally(t)
	for _, a := range answers {
		all = append(all, served{at: a.At, code: a.Code})
	}
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
	return h.ownNode(prefix + "-" + h.NS)
}

// onNode pins a RayCluster's pods to node, a test's own node.
func onNode(node string) func(*rayv1.RayCluster) {
	return func(rc *rayv1.RayCluster) { pinCluster(rc, node) }
}
