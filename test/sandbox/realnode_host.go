package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoRealNode wraps every reason this machine cannot run the real node; tests skip on it.
var ErrNoRealNode = errors.New("no real node on this machine")

// realNodeTools are the host commands the real node needs, with the Debian package of each.
var realNodeTools = []struct{ bin, pkg string }{
	{"containerd", "containerd"}, {"containerd-shim-runc-v2", "containerd"}, {"ctr", "containerd"},
	{"runc", "runc"}, {"busybox", "busybox-static"}, {"wget", "wget"}, {"bash", "bash"},
	{"losetup", "mount"}, {"mount", "mount"}, {"mkfs.ext4", "e2fsprogs"}, {"nsenter", "util-linux"},
	{"ip", "iproute2"}, {"ldd", "libc-bin"},
}

// missingPackages are the Debian packages of the tools not on PATH.
func missingPackages() []string {
	seen := map[string]bool{}
	var pkgs []string
	for _, t := range realNodeTools {
		if _, err := exec.LookPath(t.bin); err != nil && !seen[t.pkg] {
			seen[t.pkg] = true
			pkgs = append(pkgs, t.pkg)
		}
	}
	return pkgs
}

// RealNodeUnavailable says in one line why this machine cannot run the real node, or nil.
func RealNodeUnavailable() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root (containers, loop devices and cgroups need it)", ErrNoRealNode)
	}
	if pkgs := missingPackages(); len(pkgs) > 0 {
		return fmt.Errorf("%w: missing packages %s (`go run ./hack/sandbox build` installs them with apt-get)", ErrNoRealNode, strings.Join(pkgs, " "))
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return fmt.Errorf("%w: no loop devices (/dev/loop-control)", ErrNoRealNode)
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			return fmt.Errorf("%w: no memory cgroup controller mounted under /sys/fs/cgroup", ErrNoRealNode)
		}
	}
	return nil
}

// ensureHostPackages installs, as root with apt-get, the Debian packages the real node needs.
// Without root or apt-get it does nothing: Up then says why there is no real node.
func ensureHostPackages(w func(string, ...any)) error {
	pkgs := missingPackages()
	if len(pkgs) == 0 || os.Geteuid() != 0 {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return nil
	}
	w("installing %s with apt-get (the real node's container runtime and image files)", strings.Join(pkgs, " "))
	install := func() ([]byte, error) {
		cmd := exec.Command("apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err != nil {
		// A fresh machine has no package lists yet.
		if out, err := exec.Command("apt-get", "update").CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get update: %v: %s", err, lastLines(string(out), 3))
		}
		if out, err := install(); err != nil {
			return fmt.Errorf("apt-get install %s: %v: %s", strings.Join(pkgs, " "), err, lastLines(string(out), 3))
		}
	}
	return nil
}

// realNodeState is what the real node changed on the host, recorded as it goes (state.json in its
// directory, and the machine's claim), so that Down, or the next Up after a crash, undoes exactly
// that and nothing else.
type realNodeState struct {
	Dir         string            `json:"dir"` // the sandbox directory
	Loop        string            `json:"loop,omitempty"`
	Route       string            `json:"route,omitempty"` // the pod range's local route`
	Mounted     bool              `json:"mounted,omitempty"`
	Sysctls     map[string]string `json:"sysctls,omitempty"` // the values before the kubelet set them
	NetnsBefore []string          `json:"netnsBefore,omitempty"`
	// Created lists host paths that did not exist before the node made them (/var/log/containers,
	// /run/containerd): removed at the end.
	Created []string `json:"created,omitempty"`
	PIDs    []int    `json:"pids,omitempty"` // containerd and the kubelet
}

// realNodeClaim is machine-wide: the one real node a machine can run names its sandbox here.
const realNodeClaim = "/run/kubectl-ray-sandbox/real-node.json"

func (s *realNodeState) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(realNodePaths{root: filepath.Join(s.Dir, "realnode")}.state(), b); err != nil {
		return err
	}
	return writeAtomic(realNodeClaim, b)
}

// kubeletSysctls are the host settings the kubelet changes at start (its "kernel defaults").
var kubeletSysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"}

func readSysctls() map[string]string {
	m := map[string]string{}
	for _, k := range kubeletSysctls {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			m[k] = strings.TrimSpace(string(b))
		}
	}
	return m
}

func netnsNames() []string {
	var out []string
	for _, d := range []string{"/run/netns", "/var/run/netns"} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			out = append(out, filepath.Join(d, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// setupDisk makes the node's filesystem: a sparse file, a loop device, ext4, mounted at fs().
func (s *realNodeState) setupDisk(p realNodePaths) error {
	f, err := os.Create(p.disk())
	if err != nil {
		return err
	}
	if err := f.Truncate(RealNodeDiskBytes); err != nil {
		f.Close()
		return err
	}
	f.Close()
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", p.disk()).CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4: %v: %s", err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", p.disk()).Output()
	if err != nil {
		return fmt.Errorf("losetup: %v", err)
	}
	s.Loop = strings.TrimSpace(string(out))
	if err := s.save(); err != nil {
		return err
	}
	if err := os.MkdirAll(p.fs(), 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("mount", "-t", "ext4", s.Loop, p.fs()).CombinedOutput(); err != nil {
		return fmt.Errorf("mount %s: %v: %s", s.Loop, err, out)
	}
	s.Mounted = true
	return s.save()
}

// cleanup undoes what the node did to the host, in order: its processes and containers, then
// mounts (pods' volumes, container root filesystems, network namespaces, the node's disk), the
// loop device, cgroups, sysctls and created paths. Each step goes on after an error; the errors
// are returned together.
func (s *realNodeState) cleanup() error {
	p := realNodePaths{root: filepath.Join(s.Dir, "realnode")}
	var errs []error
	for _, pid := range s.PIDs {
		stopProc(Proc{Name: "real node", PID: pid}, 10*time.Second)
	}
	killContainers()
	var mounts []string
	for _, m := range mountPoints() {
		if strings.HasPrefix(m, p.root+"/") || strings.HasPrefix(m, "/run/containerd/") {
			mounts = append(mounts, m)
		}
	}
	now := netnsNames()
	before := map[string]bool{}
	for _, n := range s.NetnsBefore {
		before[n] = true
	}
	for _, n := range now {
		if !before[n] && strings.Contains(filepath.Base(n), "cni-") {
			mounts = append(mounts, n)
		}
	}
	// Deepest first; the node's own filesystem last.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		if m == p.fs() {
			continue
		}
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
		if strings.Contains(m, "/netns/") {
			_ = os.Remove(m)
		}
	}
	if s.Mounted {
		if err := syscall.Unmount(p.fs(), syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p.fs(), err))
		}
	}
	if s.Loop != "" {
		if out, err := exec.Command("losetup", "-d", s.Loop).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such device") {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", s.Loop, err, strings.TrimSpace(string(out))))
		}
	}
	if s.Route != "" {
		if out, err := exec.Command("ip", "route", "del", "local", s.Route, "dev", "lo", "table", "local").CombinedOutput(); err != nil &&
			!strings.Contains(string(out), "No such process") {
			errs = append(errs, fmt.Errorf("ip route del local %s: %v: %s", s.Route, err, strings.TrimSpace(string(out))))
		}
	}
	if err := removeCgroups("kubepods"); err != nil {
		errs = append(errs, err)
	}
	for k, v := range s.Sysctls {
		if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s=%s: %w", strings.ReplaceAll(k, "/", "."), v, err))
		}
	}
	for i := len(s.Created) - 1; i >= 0; i-- {
		_ = os.RemoveAll(s.Created[i])
	}
	_ = os.RemoveAll(filepath.Join(p.root, "run"))
	if err := os.Remove(p.disk()); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	if b, err := os.ReadFile(realNodeClaim); err == nil && strings.Contains(string(b), fmt.Sprintf("%q", s.Dir)) {
		_ = os.Remove(realNodeClaim)
	}
	return errors.Join(errs...)
}

// killContainers ends every container process and containerd shim of the node: the processes in
// the kubelet's pod cgroups, and the shims serving containerd's k8s.io namespace on its socket
// (one real node a machine: they are all this node's).
func killContainers() {
	for _, pid := range cgroupProcs("kubepods") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		cmd, err := os.ReadFile(d + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if filepath.Base(args[0]) == "containerd-shim-runc-v2" && strings.Contains(string(cmd), ContainerdSocket) {
			if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
}

// cgroupDirs are the directories of cgroup name under every mounted hierarchy (v1), or the
// unified one (v2).
func cgroupDirs(name string) []string {
	var out []string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		if _, err := os.Stat("/sys/fs/cgroup/" + name); err == nil {
			out = append(out, "/sys/fs/cgroup/"+name)
		}
		return out
	}
	hs, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hs {
		d := filepath.Join("/sys/fs/cgroup", h.Name(), name)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

func cgroupProcs(name string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, root := range cgroupDirs(name) {
		_ = filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || fi.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(path)
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroups removes the cgroup trees of name, deepest first (a cgroup directory is removed
// with rmdir once its processes are gone).
func removeCgroups(name string) error {
	var errs []error
	for _, root := range cgroupDirs(name) {
		var dirs []string
		_ = filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			var err error
			for try := 0; try < 20; try++ {
				if err = syscall.Rmdir(dirs[i]); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", dirs[i], err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// mountPoints are the mount points of this mount namespace (/proc/self/mountinfo, field 5).
func mountPoints() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 {
			out = append(out, strings.ReplaceAll(fs[4], `\040`, " "))
		}
	}
	return out
}
