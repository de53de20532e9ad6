package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// deadRegistry is where every registry the real node's containerd knows is pointed: a loopback
// port nothing listens on, so a pull fails at once and on this machine. Without it, image GC
// under disk pressure once removed the pause image and containerd's pull of it sent a DNS query
// to the machine's resolver (real-node.md, obstacle 4).
const deadRegistry = "http://127.0.0.1:9"

// registries get a hosts.toml each. containerd 1.6 reads only the directory of the registry's own
// host name; _default is read by later versions.
var registries = []string{"_default", "docker.io", "registry.k8s.io", "localhost", "quay.io", "gcr.io", "ghcr.io"}

// realNodePaths are where the real node's parts live, all under the sandbox's directory except
// what this kind of machine fixes: containerd's socket (cadvisor reads only that path).
type realNodePaths struct {
	root string // <sandbox>/realnode
}

func (p realNodePaths) disk() string        { return filepath.Join(p.root, "disk.img") }
func (p realNodePaths) fs() string          { return filepath.Join(p.root, "fs") } // the loop-mounted ext4: nodefs and imagefs
func (p realNodePaths) kubeletRoot() string { return filepath.Join(p.fs(), "kubelet") }
func (p realNodePaths) podLogs() string     { return filepath.Join(p.fs(), "pod-logs") }
func (p realNodePaths) containerdRoot() string {
	return filepath.Join(p.fs(), "containerd")
}
func (p realNodePaths) containerdState() string { return filepath.Join(p.root, "run", "containerd") }
func (p realNodePaths) runcRoot() string        { return filepath.Join(p.root, "run", "runc") }
func (p realNodePaths) certsD() string          { return filepath.Join(p.root, "certs.d") }
func (p realNodePaths) cniBin() string          { return filepath.Join(p.root, "cni", "bin") }
func (p realNodePaths) cniConf() string         { return filepath.Join(p.root, "cni", "conf") }
func (p realNodePaths) containerdConfig() string {
	return filepath.Join(p.root, "containerd.toml")
}
func (p realNodePaths) kubeletConfig() string { return filepath.Join(p.root, "kubelet.yaml") }
func (p realNodePaths) kubeletCerts() string  { return filepath.Join(p.root, "kubelet-pki") }
func (p realNodePaths) resolvConf() string    { return filepath.Join(p.root, "resolv.conf") }
func (p realNodePaths) state() string         { return filepath.Join(p.root, "state.json") }

// ContainerdSocket is fixed on this kind of machine: cadvisor's containerd handler, which the
// kubelet's stats (and so its eviction ranking) rely on, reads only this path. It is why one
// machine runs one real node.
const ContainerdSocket = "/run/containerd/containerd.sock"

// cniPluginName is the type in the conflist and the binary's name in cniBin.
const cniPluginName = "kubectl-ray-loopback-cni"

func (p realNodePaths) writeConfigs(kubeletPort, healthzPort int) error {
	containerd := fmt.Sprintf(`# The sandbox's real node (test/sandbox/realnode.go). Everything under %[1]s but the socket.
version = 2
root = %[2]q
state = %[3]q
[grpc]
  address = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  # Root here lacks CAP_SYS_RESOURCE: a negative oom_score_adj is refused, and runc failed every
  # sandbox with "failed to update /proc/self/oom_score_adj: Permission denied" (real-node.md, 1).
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[6]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[9]q
`, p.root, p.containerdRoot(), p.containerdState(), ContainerdSocket, PauseImage, p.runcRoot(), p.cniBin(), p.cniConf(), p.certsD())
	files := map[string]string{
		p.containerdConfig(): containerd,
		filepath.Join(p.cniConf(), "10-kubectl-ray.conflist"): `{"cniVersion": "0.4.0", "name": "kubectl-ray-loopback", "plugins": [{"type": "` + cniPluginName + `"}]}` + "\n",
		// Pods' DNS stays on loopback: nothing answers there, and nothing leaves the machine.
		p.resolvConf():    "nameserver 127.0.0.1\n",
		p.kubeletConfig(): p.kubeletYAML(kubeletPort, healthzPort),
	}
	for _, r := range registries {
		files[filepath.Join(p.certsD(), r, "hosts.toml")] = fmt.Sprintf("# No pull leaves this machine.\nserver = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", deadRegistry, deadRegistry)
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Eviction thresholds of the real node: nodefs is a 1 GiB filesystem, so an 800 MiB fill crosses
// 300Mi free. Memory's threshold is low: memory.available counts the whole machine (a Go build
// moves it by gigabytes), so memory pressure is not part of the node's ordinary life.
const (
	RealNodeDiskBytes        = 1 << 30
	RealNodeEvictionNodefs   = "300Mi"
	RealNodeEvictionMemory   = "100Mi"
	realNodePressurePeriodSe = 30
)

func (p realNodePaths) kubeletYAML(port, healthzPort int) string {
	return strings.Join([]string{
		"apiVersion: kubelet.config.k8s.io/v1beta1",
		"kind: KubeletConfiguration",
		"address: 127.0.0.1",
		"port: " + strconv.Itoa(port),
		"readOnlyPort: 0",
		"healthzBindAddress: 127.0.0.1",
		"healthzPort: " + strconv.Itoa(healthzPort),
		// The sandbox's API server has no kubelet client certificate.
		"authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}",
		"authorization: {mode: AlwaysAllow}",
		"cgroupDriver: cgroupfs",
		// This kind of machine has cgroup v1 (hybrid); since Kubernetes 1.35 the kubelet refuses
		// to start on it unless told not to (KEP-5573, the removal of cgroup v1 support).
		"failCgroupV1: false",
		"containerRuntimeEndpoint: unix://" + ContainerdSocket,
		"clusterDNS: [127.0.0.1]",
		"clusterDomain: " + ClusterDomain,
		"resolvConf: " + p.resolvConf(),
		"failSwapOn: false",
		// No iptables chains: the kubelet would otherwise add KUBE-* chains to the host.
		"makeIPTablesUtilChains: false",
		"podLogsDir: " + p.podLogs(),
		"maxPods: 30",
		"serializeImagePulls: false",
		"evictionHard: {nodefs.available: " + RealNodeEvictionNodefs + ", imagefs.available: " + RealNodeEvictionNodefs + ", memory.available: " + RealNodeEvictionMemory + "}",
		// The default 5 minutes would keep the node tainted that long after each experiment.
		"evictionPressureTransitionPeriod: " + strconv.Itoa(realNodePressurePeriodSe) + "s",
		// Image GC (periodic, and the eviction manager's reclaim under disk pressure) skips images
		// first seen less than this ago: the images imported at start stay for the node's life, so
		// no pull of them is ever tried.
		"imageMinimumGCAge: 720h",
		"imageGCHighThresholdPercent: 100",
		"imageGCLowThresholdPercent: 99",
		"",
	}, "\n")
}
