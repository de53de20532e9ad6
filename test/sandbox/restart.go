package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Stop stops one component ("kube-apiserver", "kuberay-operator", "kwok", ...) and leaves the rest
// running: how tests play an API server outage or an operator that is down. Start brings it back.
func (sb *Sandbox) Stop(name string) error {
	for _, p := range sb.state.Procs {
		if p.Name == name && alive(p.PID) {
			stopProc(p, 10*time.Second)
			return nil
		}
	}
	return fmt.Errorf("no running %s in this sandbox", name)
}

// Start starts a stopped component again with the arguments it had, and waits until it is ready.
func (sb *Sandbox) Start(ctx context.Context, name string) error {
	var last *Proc
	for i := range sb.state.Procs {
		if sb.state.Procs[i].Name == name {
			last = &sb.state.Procs[i]
		}
	}
	if last == nil {
		return fmt.Errorf("%s was never started in this sandbox", name)
	}
	if alive(last.PID) {
		return fmt.Errorf("%s is already running (pid %d)", name, last.PID)
	}
	args := append([]string(nil), last.Args[1:]...)
	p, err := sb.startEnv(name, last.Env, last.Args[0], args...)
	if err != nil {
		return err
	}
	ports := sb.state.Ports
	switch name {
	case "kube-apiserver":
		return sb.waitHTTP(ctx, name, sb.state.Server+"/readyz", sb.adminToken(), 60*time.Second, p.PID)
	case "kuberay-operator":
		return sb.waitHTTP(ctx, name, "http://127.0.0.1:"+strconv.Itoa(ports["operator-health"])+"/readyz", "", 60*time.Second, p.PID)
	case "kwok":
		return sb.waitHTTP(ctx, name, "http://127.0.0.1:"+strconv.Itoa(ports["kwok"])+"/healthz", "", 30*time.Second, p.PID)
	}
	return nil
}

func (sb *Sandbox) adminToken() string {
	if sb.Admin != nil {
		return sb.Admin.BearerToken
	}
	return ""
}
