package sandbox

import (
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
