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
