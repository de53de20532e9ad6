package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildWatchdog builds the kubectl-ray binary from the repository root, with the flags
// test/e2e builds it with (CGO off, -trimpath, the same version stamp), so that after the root
// module's tests (make test) every package is already compiled and only the link is left.
func buildWatchdog(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-ray")
	build := exec.Command("go", "build", "-trimpath", "-o", bin,
		"-ldflags", "-X github.com/kubectl-ray/kubectl-ray/pkg/version.Version=v0.0.0-e2e",
		"github.com/kubectl-ray/kubectl-ray/cmd/kubectl-ray")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-ray: %v\n%s", err, out)
	}
	return bin
}

// watchdogProc is `kubectl-ray heal --watch -o json` running as the real binary: its stdout (one
// JSON object per line, client-go's own messages included) and stderr gathered as they come.
type watchdogProc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	stderr bytes.Buffer
	done   chan struct{}
	code   int
}

func startWatchdog(t *testing.T, bin, name string, args []string) *watchdogProc {
	t.Helper()
	w := &watchdogProc{name: name, done: make(chan struct{})}
	w.cmd = exec.Command(bin, args...)
	w.cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.stderr.Write(p)
	})
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
		var ee *exec.ExitError
		if err := w.cmd.Wait(); errors.As(err, &ee) {
			w.code = ee.ExitCode()
		}
		close(w.done)
	}()
	t.Cleanup(func() { w.stop() })
	return w
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// output is everything it printed so far, stdout then stderr.
func (w *watchdogProc) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n") + "\n" + w.stderr.String()
}

// records are its JSON lines that have every key=value of kv.
func (w *watchdogProc) records(kv ...string) []map[string]any {
	w.mu.Lock()
	lines := append([]string(nil), w.lines...)
	w.mu.Unlock()
	var out []map[string]any
	for _, l := range lines {
		m := map[string]any{}
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			if s, _ := m[kv[i]].(string); s != kv[i+1] {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func (w *watchdogProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM (the watchdog then gives up its Lease) and waits; SIGKILL after 20 s.
func (w *watchdogProc) stop() int {
	if !w.exited() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			_ = w.cmd.Process.Kill()
			<-w.done
			return -1
		}
	}
	return w.code
}

// metricsAddr is the address its "serving metrics and probes" line names, "" before it.
func (w *watchdogProc) metricsAddr() string {
	if r := w.records("msg", "serving metrics and probes"); len(r) > 0 {
		s, _ := r[0]["address"].(string)
		return s
	}
	return ""
}

// scrape reads its /metrics (on loopback).
func scrape(ctx context.Context, addr string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// sampleValue is the value of the series name whose labels include every label="value" of
// labels, as the text exposition format writes it, and whether there is one.
func sampleValue(exposition, name string, labels ...string) (string, bool) {
	for _, l := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		series, value, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		match := true
		for _, lv := range labels {
			if !strings.Contains(series, lv) {
				match = false
			}
		}
		if match {
			return value, true
		}
	}
	return "", false
}

// waitRecord waits for a record with every key=value of kv; false if the process exits or
// timeout passes first.
func (w *watchdogProc) waitRecord(timeout time.Duration, kv ...string) (map[string]any, bool) {
	deadline := time.Now().Add(timeout)
	for {
		if r := w.records(kv...); len(r) > 0 {
			return r[0], true
		}
		if w.exited() || time.Now().After(deadline) {
			return nil, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
