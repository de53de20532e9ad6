package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The real node: a kubelet (KubeVersion, built from the control plane's wrapper module) on containerd
// and runc, running real containers beside the kwok nodes (docs/sandbox.md, real-node.md).
const (
	// RealNodeName is its Node.
	RealNodeName = "real-node-0"
	// RealNodeTaint keeps every pod off it but those that ask: tests place pods there with
	// RealNodePlacement; everything else in the sandbox stays on kwok's nodes.
	RealNodeTaint = "kubectl-ray.io/real-node"
	// RealNodeLabel is on it (value "true"), for nodeSelectors.
	RealNodeLabel = "kubectl-ray.io/real-node"
	// RealNodePodCIDR is where its pods' IPs come from (the CNI plugin,
	// cmd/kubectl-ray-loopback-cni). Each is an address on its pod's own lo only; on this machine
	// the range is routed to loopback while the node runs, so nothing sent to one ever leaves.
	RealNodePodCIDR = "10.250.0.0/16"
)

// RealNodePlacement puts a pod spec on the real node: its label as nodeSelector, its taint
// tolerated.
func RealNodePlacement(spec *corev1.PodSpec) {
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[RealNodeLabel] = "true"
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: RealNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
}

// HasRealNode reports whether this sandbox runs the real node.
func (sb *Sandbox) HasRealNode() bool { return sb.state.RealNode }

// RealNodeDir is the real node's directory (its disk, configs and the kubelet's root).
func (sb *Sandbox) RealNodeDir() string { return filepath.Join(sb.cfg.Dir, "realnode") }

// startRealNode claims the machine's one real node, makes its disk, starts containerd, imports
// the images and starts the kubelet, and waits until the Node is Ready and schedulable.
func (sb *Sandbox) startRealNode(ctx context.Context) error {
	if err := RealNodeUnavailable(); err != nil {
		return err
	}
	for _, f := range []string{sb.cfg.kubeBin("kubelet"), sb.cfg.cniPlugin(), sb.cfg.imageTar("ray.tar")} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%w: %s is not built: run `go run ./hack/sandbox build` as root", ErrNoRealNode, f)
		}
	}
	if err := ReclaimRealNode(); err != nil {
		return err
	}
	p := realNodePaths{root: sb.RealNodeDir()}
	st := &realNodeState{Dir: sb.cfg.Dir, Sysctls: readSysctls(), NetnsBefore: netnsNames()}
	for _, d := range []string{"/var/log/containers", "/run/containerd"} {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			st.Created = append(st.Created, d)
		}
	}
	if err := os.MkdirAll(p.root, 0o755); err != nil {
		return err
	}
	if err := st.save(); err != nil {
		return err
	}
	sb.realNode = st
	sb.state.RealNode = true
	sb.logf("real node: a %d MiB ext4 on a loop device as nodefs and imagefs", RealNodeDiskBytes>>20)
	if err := st.setupDisk(p); err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	sb.state.Ports["kubelet"], sb.state.Ports["kubelet-healthz"] = ports[0], ports[1]
	if err := p.writeConfigs(ports[0], ports[1]); err != nil {
		return err
	}
	for _, name := range []string{cniPluginName, "loopback"} {
		if err := copyFile(sb.cfg.cniPlugin(), filepath.Join(p.cniBin(), name), 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{p.kubeletRoot(), p.podLogs(), p.containerdRoot(), p.containerdState(), p.runcRoot()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	// Pod IPs stay on this machine: a dial of one from here reaches loopback, never a network.
	if out, err := exec.Command("ip", "route", "add", "local", RealNodePodCIDR, "dev", "lo", "table", "local").CombinedOutput(); err != nil {
		return fmt.Errorf("routing the real node's pod range %s to loopback: %v: %s", RealNodePodCIDR, err, strings.TrimSpace(string(out)))
	}
	st.Route = RealNodePodCIDR
	if err := st.save(); err != nil {
		return err
	}
	sb.logf("real node: starting containerd (socket %s)", ContainerdSocket)
	ctrd, err := sb.start("containerd", "containerd", "--config", p.containerdConfig())
	if err != nil {
		return err
	}
	st.PIDs = append(st.PIDs, ctrd.PID)
	if err := st.save(); err != nil {
		return err
	}
	if err := waitCmd(ctx, 30*time.Second, ctrd.PID, "ctr", "--address", ContainerdSocket, "version"); err != nil {
		return fmt.Errorf("containerd did not start: %v; log: %s", err, sb.LogTail("containerd", 5))
	}
	for _, img := range []string{"pause.tar", "busybox.tar", "ray.tar"} {
		if out, err := exec.CommandContext(ctx, "ctr", "--address", ContainerdSocket, "-n", "k8s.io", "images", "import", sb.cfg.imageTar(img)).CombinedOutput(); err != nil {
			return fmt.Errorf("importing %s into containerd: %v: %s", img, err, lastLines(string(out), 3))
		}
	}

	sb.logf("real node: starting the kubelet %s as node %s", KubeVersion, RealNodeName)
	kl, err := sb.start("kubelet", sb.cfg.kubeBin("kubelet"),
		"--config", p.kubeletConfig(),
		// The admin context: the sandbox's API server runs RBAC only, without the Node authorizer
		// that would serve a system:node user.
		"--kubeconfig", sb.cfg.Kubeconfig(),
		"--root-dir", p.kubeletRoot(),
		"--cert-dir", p.kubeletCerts(),
		"--hostname-override", RealNodeName,
		// The kubelet refuses a loopback node IP (validateNodeIP). With an external cloud provider
		// it sets no address at all, and the one written below stays (real-node.md, obstacle 2).
		"--cloud-provider", "external",
		"--node-labels", RealNodeLabel+"=true,type=real",
		"--register-with-taints", RealNodeTaint+"=true:NoSchedule",
		"--v", "2")
	if err != nil {
		return err
	}
	st.PIDs = append(st.PIDs, kl.PID)
	if err := st.save(); err != nil {
		return err
	}
	return sb.initRealNode(ctx, kl.PID)
}

// initRealNode plays the cloud provider's one part: the Node's addresses (InternalIP 127.0.0.1,
// where the API server reaches the kubelet for exec, logs and port-forward) and the removal of
// the uninitialized taint. Then it waits for Ready.
func (sb *Sandbox) initRealNode(ctx context.Context, pid int) error {
	nodes := sb.Kube.CoreV1().Nodes()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if !alive(pid) {
			return false, fmt.Errorf("the kubelet exited: %s", sb.LogTail("kubelet", 5))
		}
		_, err := nodes.Get(ctx, RealNodeName, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the real node did not register: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := nodes.Get(ctx, RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: RealNodeName}}
		if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return false, nil
		}
		n, err = nodes.Get(ctx, RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != "node.cloudprovider.kubernetes.io/uninitialized" {
				taints = append(taints, t)
			}
		}
		n.Spec.Taints = taints
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("initialising the real node's addresses: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := nodes.Get(ctx, RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, t := range n.Spec.Taints {
			if t.Key != RealNodeTaint {
				return false, nil
			}
		}
		return NodeReady(n), nil
	})
	if err != nil {
		return fmt.Errorf("the real node did not become Ready: %v; kubelet log: %s", err, sb.LogTail("kubelet", 5))
	}
	sb.logf("real node %s Ready (kubelet on 127.0.0.1:%d)", RealNodeName, sb.state.Ports["kubelet"])
	return nil
}

// stopRealNode stops the kubelet and containerd and undoes everything on the host. It runs before
// the control plane stops, so the kubelet never sees its API server vanish mid-shutdown.
func (sb *Sandbox) stopRealNode() error {
	st := sb.realNode
	if st == nil {
		b, err := os.ReadFile(realNodePaths{root: sb.RealNodeDir()}.state())
		if err != nil {
			return nil
		}
		st = &realNodeState{}
		if err := json.Unmarshal(b, st); err != nil {
			return err
		}
	}
	err := st.cleanup()
	sb.realNode = nil
	return err
}

// ReclaimRealNode frees the machine's real node from a sandbox that is gone: a crash, or a test
// process killed, leaves containers, mounts, the loop device and the kubelet's sysctls behind. A
// sandbox still running keeps it. Up calls it; tests that compare the host before and after a
// real node call it first, so that "before" is the machine's own state and not a dead node's.
func ReclaimRealNode() error {
	b, err := os.ReadFile(realNodeClaim)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var st realNodeState
	if err := json.Unmarshal(b, &st); err != nil {
		return os.Remove(realNodeClaim)
	}
	for _, pid := range st.PIDs {
		if alive(pid) {
			return fmt.Errorf("%w: the machine's one real node is in use by the sandbox in %s (down it first)", ErrNoRealNode, st.Dir)
		}
	}
	if err := st.cleanup(); err != nil {
		return fmt.Errorf("cleaning up the real node the sandbox in %s left behind: %v", st.Dir, err)
	}
	return nil
}

func waitCmd(ctx context.Context, timeout time.Duration, pid int, name string, args ...string) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return errors.New("exited")
		}
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err == nil {
			return nil
		}
		last = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}
