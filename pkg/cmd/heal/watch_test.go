package heal

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// evictKubelet plays the kubelet evicting the head pod of c: the pod, now Failed/Evicted, at
// resourceVersion 101.
func (e *env) evictKubelet(t *testing.T, c *rayv1.RayCluster, pod string) {
	t.Helper()
	p := evictedPod(c, pod)
	p.ResourceVersion = "101"
	if err := e.kc.Tracker().Update(podsGVR, p, "default"); err != nil {
		t.Fatal(err)
	}
}

// watching is a heal --watch running in a goroutine, on the real clock, its log in out.
type watching struct {
	out    *testio.Buffer
	cancel context.CancelFunc
	done   chan error
}

// startWatch runs heal --watch --yes with args; the test's end stops it if stop did not.
func (e *env) startWatch(t *testing.T, args ...string) *watching {
	e.f.Now = time.Now
	w := &watching{out: &testio.Buffer{}, done: make(chan error, 1)}
	e.f.IOStreams.Out = w.out
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	t.Cleanup(cancel)
	go func() { w.done <- e.run(ctx, append([]string{"--watch", "--yes"}, args...)...) }()
	return w
}

// started waits for the watchdog's first line.
func (w *watching) started(t *testing.T) {
	t.Helper()
	eventually(t, "the watchdog to start", func() bool { return strings.Contains(w.out.String(), "msg=watching") })
}

// stop ends the watch as Ctrl-C does and returns its error.
func (w *watching) stop() error {
	w.cancel()
	return <-w.done
}

func (e *env) podDeletes() int {
	n := 0
	for _, a := range e.kc.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

// TestWatchSurvivesAnExpiredWatch: the pod watch fails with 410 Expired (what an API server
// restart or a compacted etcd gives); the informer lists again, and the next eviction is healed.
func TestWatchSurvivesAnExpiredWatch(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c, headPod(c, "rc-head-a"))
	first := watch.NewFake()
	var podWatches, podLists atomic.Int32
	e.kc.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		if podWatches.Add(1) == 1 {
			return true, first, nil
		}
		return false, nil, nil // later watches: the tracker's
	})
	e.kc.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		podLists.Add(1)
		return false, nil, nil
	})
	w := e.startWatch(t, "--min-age", "0s")
	w.started(t)

	first.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: "too old resource version"})
	eventually(t, "a second LIST and WATCH", func() bool { return podLists.Load() >= 2 && podWatches.Load() >= 2 })

	e.evictKubelet(t, c, "rc-head-a")
	eventually(t, "the delete", func() bool { return e.podDeletes() == 1 })
	eventually(t, "the log line", func() bool { return strings.Contains(w.out.String(), `result=deleted`) })
	if err := w.stop(); err != nil {
		t.Fatalf("watch ended with %v", err)
	}
	var line string
	for _, l := range strings.Split(w.out.String(), "\n") {
		if strings.Contains(l, "result=deleted") {
			line = l
		}
	}
	want := `level=info msg="deleted pod default/rc-head-a (rule head-evicted)" action=delete result=deleted rule=head-evicted raycluster=default/rc pod=rc-head-a uid=uid-rc-head-a resourceVersion=101 node=node-a`
	if !strings.HasSuffix(line, want) {
		t.Errorf("log line:\n%s\nwant suffix:\n%s", line, want)
	}
}

// TestWatchWaitsMinAge: a head that needs healing is left alone for --min-age.
func TestWatchWaitsMinAge(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c, evictedPod(c, "rc-head-a"))
	start := time.Now()
	w := e.startWatch(t, "--min-age", "300ms")
	eventually(t, "the delete", func() bool { return e.podDeletes() == 1 })
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("deleted after %s, before --min-age", waited)
	}
	_ = w.stop()
}

// TestLeaderElection: two watchdogs share a cluster; exactly one deletes; when it stops, the
// other takes over and heals the next eviction.
func TestLeaderElection(t *testing.T) {
	// Short enough for a unit test, long enough that a loaded machine does not make the leader
	// miss its renewals (which would hand the lease over mid-test).
	election = kube.Election{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond}
	defer func() { election = kube.DefaultElection }()
	a, b := rayCluster("a"), rayCluster("b")
	e1 := newEnv(a, headPod(a, "a-head"), headPod(b, "b-head"))
	if _, err := e1.rc.RayV1().RayClusters("default").Create(context.Background(), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The second replica talks to the same API server.
	e2 := newEnv(a)
	e2.f.NewClients = e1.f.NewClients
	envs := []*env{e1, e2}
	outs := []*testio.Buffer{{}, {}}
	cancels := make([]context.CancelFunc, 2)
	dones := make([]chan error, 2)
	for i, e := range envs {
		e.f.Now = time.Now
		e.f.IOStreams.Out = outs[i]
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i], dones[i] = cancel, make(chan error, 1)
		go func(e *env, done chan error) {
			done <- e.run(ctx, "--watch", "--yes", "--min-age", "0s", "--leader-elect", "--lease-namespace", "default")
		}(e, dones[i])
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	// whoSaid waits until one replica's log has line, and returns which.
	whoSaid := func(what, line string) int {
		who := -1
		eventually(t, what, func() bool {
			for i, o := range outs {
				if strings.Contains(o.String(), line) {
					who = i
					return true
				}
			}
			return false
		})
		return who
	}
	whoSaid("a leader", "msg=watching")

	e1.evictKubelet(t, a, "a-head")
	// Whoever holds the Lease when the eviction lands deletes; that is the leader from here on.
	leader := whoSaid("the leader's delete", "result=deleted")
	follower := 1 - leader
	time.Sleep(200 * time.Millisecond)
	if n := e1.podDeletes(); n != 1 {
		t.Fatalf("%d deletes, want exactly 1", n)
	}
	if strings.Contains(outs[follower].String(), "result=") {
		t.Fatalf("the follower acted:\n%s", outs[follower])
	}

	cancels[leader]()
	if err := <-dones[leader]; err != nil {
		t.Fatalf("leader ended with %v", err)
	}
	eventually(t, "the follower to take over", func() bool { return strings.Contains(outs[follower].String(), "msg=watching") })
	e1.evictKubelet(t, b, "b-head")
	eventually(t, "the new leader's delete", func() bool {
		return strings.Contains(outs[follower].String(), `msg="deleted pod default/b-head (rule head-evicted)"`)
	})
	if _, err := e1.kc.Tracker().Get(podsGVR, "default", "a-head"); err == nil {
		t.Errorf("a-head still there")
	}
}

// TestWatchForbidden: RBAC cannot be fixed by retrying; the watchdog ends with one line.
func TestWatchForbidden(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c)
	e.rc.PrependReactor("list", "rayclusters", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, "", errors.New("no"))
	})
	err := e.run(context.Background(), "--watch", "--yes")
	want := `forbidden: you cannot list rayclusters.ray.io in namespace "default"; ask for RBAC verb "list" on "rayclusters.ray.io" (check with: kubectl auth can-i list rayclusters.ray.io -n default)`
	if exit.CodeOf(err) != exit.Forbidden || err.Error() != want {
		t.Fatalf("err = %v (code %d)", err, exit.CodeOf(err))
	}
}

// The watchdog keeps a pod's evidence in its own log before the delete, every line marked with
// evidence=UID; and under --evidence-dir too, when given (a mounted volume).
func TestWatchKeepsEvidenceInItsLog(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c, headPod(c, "rc-head-a"))
	dir := t.TempDir()
	w := e.startWatch(t, "--min-age", "0s", "--evidence-dir", dir)
	w.started(t)
	e.evictKubelet(t, c, "rc-head-a")
	eventually(t, "the log line", func() bool { return strings.Contains(w.out.String(), `result=deleted`) })
	if err := w.stop(); err != nil {
		t.Fatalf("watch ended with %v", err)
	}
	kept := filepath.Join(dir, "default", "rc-head-a-uid-rc-h")
	var evidence, deleted []string
	for _, l := range strings.Split(w.out.String(), "\n") {
		switch {
		case strings.Contains(l, "result=deleted"):
			deleted = append(deleted, l)
		case strings.Contains(l, "evidence=uid-rc-head-a pod=default/rc-head-a"):
			evidence = append(evidence, l)
		}
	}
	if len(deleted) != 1 || !strings.HasSuffix(deleted[0], ` evidence="the watchdog's log (evidence=uid-rc-head-a) and `+kept+`"`) {
		t.Errorf("delete line %q does not say where the evidence is", deleted)
	}
	// This evicted pod has no container statuses, so no log is asked for (pkg/evidence's tests
	// hold the logs); its status is what the kubelet left.
	want := []string{`msg="evidence kept before delete" evidence=uid-rc-head-a pod=default/rc-head-a rule=head-evicted cluster=default/rc kept="pod YAML, 0 Events, 0 logs"`,
		`msg="evidence pod status" evidence=uid-rc-head-a pod=default/rc-head-a status="{\"phase\":\"Failed\"`}
	if len(evidence) != len(want) {
		t.Fatalf("evidence lines:\n%s\nwant %d", strings.Join(evidence, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.Contains(evidence[i], w) {
			t.Errorf("evidence line %d:\n%s\nwant %s", i, evidence[i], w)
		}
	}
	if _, err := os.Stat(filepath.Join(kept, "pod.yaml")); err != nil {
		t.Errorf("evidence dir: %v", err)
	}
}
