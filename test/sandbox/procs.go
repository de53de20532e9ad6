package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// State is what `up` records in Dir/state.json so `down` (maybe another process) can stop it.
type State struct {
	Operator   string         `json:"operator"`
	Kubeconfig string         `json:"kubeconfig"`
	Server     string         `json:"server"`
	Ports      map[string]int `json:"ports"`
	// ServiceProxy is the operator's HTTP_PROXY (ServeNetwork only).
	ServiceProxy string `json:"serviceProxy,omitempty"`
	// RealNode is set once the real node's start began: down then undoes it on the host.
	RealNode bool `json:"realNode,omitempty"`
	// Procs in start order; down stops them in reverse.
	Procs []Proc `json:"procs"`
}

// Proc is one started process.
type Proc struct {
	Name string   `json:"name"`
	PID  int      `json:"pid"`
	Args []string `json:"args"`
	// Env is what the process got on top of this process's environment (Start reuses it).
	Env []string `json:"env,omitempty"`
	Log string   `json:"log"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func loadState(dir string) (*State, error) {
	b, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %v", statePath(dir), err)
	}
	return &s, nil
}

func (s *State) save(dir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(statePath(dir), b)
}

// start launches bin with args in its own process group, logging to Dir/logs/<name>.log.
func (sb *Sandbox) start(name, bin string, args ...string) (*Proc, error) {
	return sb.startEnv(name, nil, bin, args...)
}

// startEnv is start with extra environment variables.
func (sb *Sandbox) startEnv(name string, env []string, bin string, args ...string) (*Proc, error) {
	logs := filepath.Join(sb.cfg.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logs, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = sb.cfg.Dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if sb.cfg.DieWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", name, err)
	}
	p := Proc{Name: name, PID: cmd.Process.Pid, Args: append([]string{bin}, args...), Env: env, Log: logPath}
	// Reap it when it exits, so a dead child is not a zombie that looks alive to down.
	go func() { _ = cmd.Wait() }()
	sb.state.Procs = append(sb.state.Procs, p)
	if err := sb.state.save(sb.cfg.Dir); err != nil {
		return nil, err
	}
	return &sb.state.Procs[len(sb.state.Procs)-1], nil
}

// Alive reports whether pid runs and is not a zombie.
func Alive(pid int) bool { return alive(pid) }

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return !errors.Is(err, syscall.ESRCH)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Field 3 of /proc/PID/stat is the state; Z is a zombie.
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2] != 'Z'
		}
	}
	return true
}

// stopProc sends SIGTERM to the process group, waits up to grace, then SIGKILLs it.
func stopProc(p Proc, grace time.Duration) {
	if !alive(p.PID) {
		return
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !alive(p.PID) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	for i := 0; i < 100 && alive(p.PID); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// freePorts draws n distinct free loopback ports, none handed out before by this process.
//
// They come from below the kernel's ephemeral range (ip_local_port_range). A port is closed
// before its user binds it, seconds later for the operator's: a port drawn by binding port 0
// lies in the range every outgoing connection's local port comes from, and on a busy machine
// (an API server and its clients open thousands) one of those took it first, so the operator
// exited on "address already in use". Below the range only an explicit bind can take it.
// Sandboxes started at once in one test process draw at once, hence portsGiven.
func freePorts(n int) ([]int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	lo, hi := staticPortRange()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		addr := "127.0.0.1:0"
		if lo > 0 && tries < 4*(hi-lo) {
			addr = "127.0.0.1:" + strconv.Itoa(lo+rand.Intn(hi-lo))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if addr != "127.0.0.1:0" {
				continue // taken: draw another
			}
			return nil, fmt.Errorf("no free loopback port: %v", err)
		}
		ls = append(ls, l) // held open until all are drawn, so none comes twice
		port := l.Addr().(*net.TCPAddr).Port
		if portsGiven[port] {
			continue
		}
		portsGiven[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// staticPortRange is the ports freePorts draws from: 10,000 below the ephemeral range's start,
// or none (bind port 0) when that range cannot be read or starts too low to leave room.
func staticPortRange() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	start, err := strconv.Atoi(f[0])
	if err != nil || start < 12000 {
		return 0, 0
	}
	return start - 10000, start
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// portInUse reports whether something listens on 127.0.0.1:port.
func portInUse(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
