package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// healRunWith runs the binary with another kubeconfig (a proxy's), in the test's namespace
// unless args name one.
func (h *H) healRunWith(kubeconfig string, args ...string) Result {
	h.T.Helper()
	full := append([]string{"--kubeconfig", kubeconfig}, args...)
	if !hasNamespaceFlag(args) {
		full = append(full, "-n", h.NS)
	}
	return h.exec(env.bin, h.evidenceOff(full), nil)
}

// healEvict plays the kubelet's node-pressure eviction of the cluster's one head (no kubelet
// runs in the sandbox) and returns the evicted pod as the API server acknowledged it.
func (h *H) healEvict(cluster string) corev1.Pod {
	h.T.Helper()
	head := h.healHead(cluster)
	p, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "ephemeral-storage")
	if err != nil {
		h.T.Fatal(err)
	}
	return *p
}

// healHead returns the cluster's one head, failing otherwise.
func (h *H) healHead(cluster string) corev1.Pod {
	h.T.Helper()
	heads := h.Pods(cluster, "head")
	if len(heads) != 1 {
		h.T.Fatalf("want one head of %s, got %v", cluster, podNames(heads))
	}
	return heads[0]
}

// healEvents lists the RayHeadHealed Events in the test's namespace.
func (h *H) healEvents() []corev1.Event {
	h.T.Helper()
	list, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "reason=RayHeadHealed"})
	if err != nil {
		h.T.Fatal(err)
	}
	return list.Items
}

// healEventsAbout returns the RayHeadHealed Events whose involved object is kind/name.
func healEventsAbout(evs []corev1.Event, kind, name string) []corev1.Event {
	var out []corev1.Event
	for _, e := range evs {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// waitNewHead waits for the cluster to have one Running, Ready head other than old, with its
// workers Running, and returns it.
func (h *H) waitNewHead(cluster, old string, timeout time.Duration) corev1.Pod {
	h.T.Helper()
	var head corev1.Pod
	h.WaitFor("a new head of "+cluster+" (not "+old+") Running and Ready", timeout, func() (bool, error) {
		heads := h.Pods(cluster, "head")
		if len(heads) != 1 || heads[0].Name == old || !PodRunningReady(&heads[0]) {
			return false, nil
		}
		head = heads[0]
		return true, nil
	})
	return head
}

// podGone reports whether the pod with this name and UID no longer exists.
func (h *H) podGone(name string, uid string) bool {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	return err != nil || string(p.UID) != uid
}

// ownSandbox starts a sandbox of the test's own (KubeRay v1.1.1 unless said, 2 nodes), for
// tests that stop one of its components; the shared one is never stopped.
func ownSandbox(t *testing.T, name, operator string) *sandbox.Sandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := sandbox.Up(ctx, sandbox.Config{Dir: filepath.Join(env.work, "sandbox-heal-"+name), Operator: operator, Nodes: 2, DieWithParent: true}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Down() })
	return sb
}

// watchdog is `kubectl-ray heal --watch` running in the background as the real binary, its
// stdout (one JSON object per line with -o json) read as it comes.
type watchdog struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	stderr bytes.Buffer
	done   chan struct{}
	code   int
}

// startWatchdog runs the binary with args (which must carry --watch) against kubeconfig; it is
// stopped, if still running, when the test ends.
func (h *H) startWatchdog(name, kubeconfig string, args ...string) *watchdog {
	h.T.Helper()
	full := append([]string{"--kubeconfig", kubeconfig}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchdog{t: h.T, name: name, done: make(chan struct{})}
	w.cmd = exec.CommandContext(ctx, env.bin, full...)
	w.cmd.Cancel = func() error { return w.cmd.Process.Signal(syscall.SIGTERM) }
	w.cmd.WaitDelay = 10 * time.Second
	w.cmd.Stderr = &lockedWriter{mu: &w.mu, w: &w.stderr}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		h.T.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		h.T.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
		err := w.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			w.code = ee.ExitCode()
		}
		close(w.done)
	}()
	h.T.Cleanup(func() {
		cancel()
		<-w.done
		if h.T.Failed() {
			h.T.Logf("watchdog %s (exit %d) stdout:\n%s\nstderr:\n%s", name, w.code, strings.Join(w.Lines(), "\n"), w.Stderr())
		}
	})
	return w
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Lines is everything the watchdog printed so far.
func (w *watchdog) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

func (w *watchdog) Stderr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

// Records are the watchdog's JSON lines, parsed; a line that is not JSON fails the test.
func (w *watchdog) Records() []map[string]string {
	w.t.Helper()
	var out []map[string]string
	for _, l := range w.Lines() {
		m := map[string]string{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			w.t.Fatalf("watchdog %s printed a line that is not a JSON object: %q", w.name, l)
		}
		out = append(out, m)
	}
	return out
}

// Matching are the records with every key=value of kv.
func (w *watchdog) Matching(kv ...string) []map[string]string {
	w.t.Helper()
	var out []map[string]string
	for _, r := range w.Records() {
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			if r[kv[i]] != kv[i+1] {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// WaitRecord waits for a record with every key=value of kv and returns the first.
func (w *watchdog) WaitRecord(what string, timeout time.Duration, kv ...string) map[string]string {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := w.Matching(kv...); len(m) > 0 {
			return m[0]
		}
		select {
		case <-w.done:
			w.t.Fatalf("watchdog %s exited (code %d) before %s; stderr: %s", w.name, w.code, what, w.Stderr())
		default:
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("watchdog %s: no %s within %s; it printed:\n%s", w.name, what, timeout, strings.Join(w.Lines(), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Running reports whether the process has not exited.
func (w *watchdog) Running() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// Stop sends sig and waits for the process to exit; it returns the exit code.
func (w *watchdog) Stop(sig syscall.Signal) int {
	w.t.Helper()
	_ = w.cmd.Process.Signal(sig)
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		w.t.Fatalf("watchdog %s did not exit within 20s of %v", w.name, sig)
	}
	return w.code
}
