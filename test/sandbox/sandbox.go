package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Sandbox is a running control plane.
type Sandbox struct {
	cfg   Config
	state *State
	out   io.Writer
	// Admin is a rest.Config for the admin user.
	Admin *rest.Config
	// Kube is an admin clientset.
	Kube kubernetes.Interface

	svcProxy *serviceProxy  // ServeNetwork only; lives in this process
	realNode *realNodeState // RealNode only
}

// Config returns the sandbox's configuration, defaults filled in.
func (sb *Sandbox) Config() Config { return sb.cfg }

// Kubeconfig is the path of the sandbox's kubeconfig.
func (sb *Sandbox) Kubeconfig() string { return sb.cfg.Kubeconfig() }

// Operator is the operator version running ("none" when none).
func (sb *Sandbox) Operator() string { return sb.cfg.Operator }

// Attach returns the sandbox already running in cfg.Dir.
func Attach(cfg Config) (*Sandbox, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	st, err := loadState(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("no sandbox is up in %s: run `up` first", cfg.Dir)
	}
	cfg.Operator = st.Operator
	sb := &Sandbox{cfg: cfg, state: st, out: io.Discard}
	return sb, sb.connect()
}

func (sb *Sandbox) connect() error {
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: sb.cfg.Kubeconfig()},
		&clientcmd.ConfigOverrides{CurrentContext: ContextAdmin}).ClientConfig()
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 200, 400
	sb.Admin = rc
	sb.Kube, err = kubernetes.NewForConfig(rc)
	return err
}

// RestConfigFor returns a rest.Config for one of the kubeconfig's contexts.
func (sb *Sandbox) RestConfigFor(context string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: sb.cfg.Kubeconfig()},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}

// LogTail returns the last n lines of a component's log, for failure messages.
func (sb *Sandbox) LogTail(name string, n int) string {
	b, err := os.ReadFile(filepath.Join(sb.cfg.Dir, "logs", name+".log"))
	if err != nil {
		return ""
	}
	return lastLines(string(b), n)
}

// LogPath is where a component logs ("etcd", "kube-apiserver", "kuberay-operator", "kwok", ...).
func (sb *Sandbox) LogPath(name string) string {
	return filepath.Join(sb.cfg.Dir, "logs", name+".log")
}

// waitHTTP polls url until it answers 200 or the deadline passes; a process that exits first
// fails at once with its log's tail.
func (sb *Sandbox) waitHTTP(ctx context.Context, name, url, token string, timeout time.Duration, pid int) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		// Readiness of our own loopback components; the certificate is the one they just made.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if pid > 0 && !alive(pid) {
			return fmt.Errorf("%s exited during start-up: %s", name, sb.LogTail(name, 5))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = strconv.Itoa(resp.StatusCode) + " " + strings.TrimSpace(string(body))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready at %s after %s (last: %s); log: %s", name, url, timeout, last, sb.LogTail(name, 5))
}

func (sb *Sandbox) logf(format string, a ...any) {
	fmt.Fprintf(sb.out, "sandbox: "+format+"\n", a...)
}

// ServiceProxy is the URL of the sandbox's pod network (a ServeNetwork sandbox; "" otherwise): an
// HTTP proxy that reaches <svc>.<ns>.svc.cluster.local and pod IPs as the operator does.
func (sb *Sandbox) ServiceProxy() string { return sb.state.ServiceProxy }
