package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// The one exec kubectl-ray makes: `tar cf - -C DIR .` in a container, as `kubectl cp` copies a
// directory out of a pod (bundle's Ray log files, kuberay #1047: Ray's own logs live in the
// pod). One POST of pods/exec, through the API server to the node's kubelet.

// ErrNoTar is an exec of tar that found no tar in the image (its exit code 126/127, or the
// runtime's "executable file not found").
var ErrNoTar = errors.New("the container's image has no tar (kubectl cp needs it too)")

// ErrNoDir is a tar that found no directory to archive.
var ErrNoDir = errors.New("no such directory in the container")

// TarDir archives dir in container of pod and returns the tar stream, at most limit bytes of it
// (truncated then says it was cut: the files in it up to the cut are whole).
func (c *Clients) TarDir(ctx context.Context, namespace, pod, container, dir string, limit int64) (stream []byte, truncated bool, err error) {
	if c.Config == nil {
		return nil, false, fault.Errorf(fault.API, "cannot exec without a connection to an API server")
	}
	req := c.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: []string{"tar", "cf", "-", "-C", dir, "."},
			Stdout: true, Stderr: true}, scheme.ParameterCodec)
	rt, upgrader, err := spdy.RoundTripperFor(c.Config)
	if err != nil {
		return nil, false, fault.Errorf(fault.API, "cannot exec in pod %s/%s: %v", namespace, pod, err)
	}
	ex, err := remotecommand.NewSPDYExecutorForTransports(rt, statusUpgrader{upgrader}, http.MethodPost, req.URL())
	if err != nil {
		return nil, false, fault.Errorf(fault.API, "cannot exec in pod %s/%s: %v", namespace, pod, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &cappedBuffer{limit: limit, full: cancel}
	errOut := &cappedBuffer{limit: 4 << 10}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Stderr: errOut})
	if out.cut {
		return out.buf.Bytes(), true, nil
	}
	if err == nil {
		return out.buf.Bytes(), false, nil
	}
	return nil, false, explainExec(err, errOut.buf.String(), dir, Request{Verb: "create", Resource: "pods/exec", Namespace: namespace, Name: pod, Host: c.Host()})
}

// explainExec says why the exec failed: refused (RBAC), no tar, no such directory, a kubelet
// that does not exec (a virtual node), or tar's own words.
func explainExec(err error, stderr, dir string, req Request) error {
	var code utilexec.CodeExitError
	msg := strings.TrimSpace(stderr)
	switch {
	case strings.Contains(err.Error(), "executable file not found") || strings.Contains(msg, "tar: not found") ||
		errors.As(err, &code) && (code.Code == 126 || code.Code == 127):
		return fmt.Errorf("%w", ErrNoTar)
	case errors.As(err, &code) && strings.Contains(msg, "No such file or directory") || strings.Contains(msg, "can't change directory"):
		return fmt.Errorf("%w: %s", ErrNoDir, dir)
	case errors.As(err, &code):
		line, _, _ := strings.Cut(msg, "\n")
		return fmt.Errorf("tar exited %d: %s", code.Code, line)
	}
	if e := Explain(err, req); fault.KindOf(e) != fault.API {
		return e
	}
	return fmt.Errorf("%v; the API server could not exec through the node's kubelet (a node with no kubelet, such as a virtual node, or one it cannot reach)", err)
}

// statusUpgrader keeps the API server's Status when it refuses the SPDY upgrade: client-go
// v0.37's SPDY round tripper (k8s.io/streaming) words a refusal as text only ("unable to upgrade
// connection: pods ... is forbidden"), where v0.34's returned the Status, which says whether
// RBAC refused the exec.
type statusUpgrader struct{ spdy.Upgrader }

func (u statusUpgrader) NewConnection(resp *http.Response) (httpstream.Connection, error) {
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.Body != nil {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		var st metav1.Status
		if err == nil && json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Status == metav1.StatusFailure {
			return nil, &apierrors.StatusError{ErrStatus: st}
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return u.Upgrader.NewConnection(resp)
}

// cappedBuffer keeps at most limit bytes; the write that reaches it calls full (which ends the
// stream) and marks the buffer cut. limit 0 keeps everything.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int64
	cut   bool
	full  func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.cut {
		return len(p), nil
	}
	if room := b.limit - int64(b.buf.Len()); b.limit > 0 && int64(len(p)) > room {
		b.buf.Write(p[:room])
		b.cut = true
		if b.full != nil {
			b.full()
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}
