package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrNothingUp is Down's answer when no sandbox is recorded in the directory: nothing was
// stopped, and nothing is left running there.
var ErrNothingUp = errors.New("nothing is up")

// Down stops the sandbox in cfg.Dir: processes in reverse start order (an API server whose etcd is
// gone hangs on SIGTERM), each SIGTERM then SIGKILL after a grace. Idempotent: a second Down
// changes nothing and returns an error wrapping ErrNothingUp, which names the directory.
func Down(cfg Config, out io.Writer) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	st, err := loadState(cfg.Dir)
	if os.IsNotExist(err) {
		return fmt.Errorf("%w in %s: no state.json there (wrong --dir, or already down)", ErrNothingUp, cfg.Dir)
	}
	if err != nil {
		return err
	}
	sb := &Sandbox{cfg: cfg, state: st, out: out}
	n := sb.stopAll()
	fmt.Fprintf(out, "sandbox: stopped %d processes in %s\n", n, cfg.Dir)
	return os.Remove(statePath(cfg.Dir))
}

// Down stops this sandbox, and its service proxy when it has one.
func (sb *Sandbox) Down() error {
	err := Down(sb.cfg, sb.out)
	sb.svcProxy.close()
	return err
}

func (sb *Sandbox) stopAll() int {
	defer sb.svcProxy.close()
	n := 0
	if sb.state.RealNode {
		// Before the control plane: the kubelet and containerd stop, then the host is cleaned.
		for _, p := range sb.state.Procs {
			if (p.Name == "kubelet" || p.Name == "containerd") && alive(p.PID) {
				n++
			}
		}
		if err := sb.stopRealNode(); err != nil {
			fmt.Fprintf(sb.out, "sandbox: real node clean-up: %v\n", err)
		}
	}
	for i := len(sb.state.Procs) - 1; i >= 0; i-- {
		p := sb.state.Procs[i]
		if alive(p.PID) {
			n++
		}
		stopProc(p, 10*time.Second)
	}
	return n
}

// Ports returns the loopback ports the sandbox listens on, by component.
func (sb *Sandbox) Ports() map[string]int { return sb.state.Ports }

// PIDs returns the process IDs the sandbox started.
func (sb *Sandbox) PIDs() []int {
	var out []int
	for _, p := range sb.state.Procs {
		out = append(out, p.PID)
	}
	return out
}
