package sandbox

import (
	"errors"
	"sync"
	"testing"
)

// Sandboxes started at once in one process draw their ports at once: no port may be handed out
// twice, although each is closed before its user binds it and the kernel may offer it again.
func TestFreePortsNeverRepeatInAProcess(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ports, err := freePorts(8)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range ports {
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				seen[p] = true
			}
		}()
	}
	wg.Wait()
	if len(seen) != 16*8 {
		t.Errorf("%d ports, want %d", len(seen), 16*8)
	}
}

// A port drawn from the ephemeral range can be taken by any outgoing connection's local port
// before its user binds it: the ports come from below that range when it can be read.
func TestFreePortsLieBelowTheEphemeralRange(t *testing.T) {
	lo, hi := staticPortRange()
	if lo == 0 {
		t.Skip("no ip_local_port_range to read here")
	}
	ports, err := freePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p < lo || p >= hi {
			t.Errorf("port %d outside [%d, %d)", p, lo, hi)
		}
	}
}

// The operator starts again on fresh ports only when one it was given was taken, and at most
// the attempts it is allowed.
func TestAgainOnTakenPort(t *testing.T) {
	taken := errors.New(`kuberay-operator exited after its start: ... listen tcp 127.0.0.1:42457: bind: address already in use`)
	other := errors.New("kuberay-operator exited during start-up: no CRDs")
	for _, c := range []struct {
		name            string
		errs            []error
		starts, redraws int
		want            error
	}{
		{"started", []error{nil}, 1, 0, nil},
		{"taken once", []error{taken, nil}, 2, 1, nil},
		{"taken every time", []error{taken, taken, taken}, 3, 2, taken},
		{"another failure", []error{other}, 1, 0, other},
	} {
		t.Run(c.name, func(t *testing.T) {
			starts, redraws := 0, 0
			err := againOnTakenPort(3, func() error { starts++; return c.errs[starts-1] }, func() error { redraws++; return nil })
			if err != c.want || starts != c.starts || redraws != c.redraws {
				t.Errorf("got %v after %d starts and %d redraws, want %v after %d and %d", err, starts, redraws, c.want, c.starts, c.redraws)
			}
		})
	}
}
