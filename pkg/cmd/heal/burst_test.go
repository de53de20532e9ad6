package heal

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// TestWatchBurst: a node dies with 200 heads of 200 RayClusters on it. Through the command, its
// informers and clients: each head is deleted exactly once, with its uid and resourceVersion as
// preconditions, and both its Events are written (after the delete, off the heal path). (The fake
// clientset runs one request at a time; the workers' concurrency is tested in pkg/repair.)
func TestWatchBurst(t *testing.T) {
	const n = 200
	first := rayCluster("c000")
	e := newEnv(first, headPod(first, "c000-head"))
	for i := 1; i < n; i++ {
		c := rayCluster(fmt.Sprintf("c%03d", i))
		if _, err := e.rc.RayV1().RayClusters("default").Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := e.kc.Tracker().Add(headPod(c, c.Name+"-head")); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	deletes := map[string]int{}
	e.kc.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteActionImpl)
		p := d.DeleteOptions.Preconditions
		if p == nil || p.UID == nil || string(*p.UID) != "uid-"+d.Name || p.ResourceVersion == nil || *p.ResourceVersion != "101" {
			t.Errorf("delete of %s without the evicted pod's uid and resourceVersion: %+v", d.Name, p)
		}
		mu.Lock()
		deletes[d.Name]++
		mu.Unlock()
		return false, nil, nil // the tracker deletes it
	})
	w := e.startWatch(t, "--min-age", "0s")
	w.started(t)

	for i := 0; i < n; i++ {
		c := rayCluster(fmt.Sprintf("c%03d", i))
		e.evictKubelet(t, c, c.Name+"-head")
	}
	eventually(t, "200 deletes", func() bool { return e.podDeletes() >= n })
	eventually(t, "400 Events", func() bool { return e.healEvents() >= 2*n })
	time.Sleep(300 * time.Millisecond) // a second delete of any head would show now
	if err := w.stop(); err != nil {
		t.Fatalf("watch ended with %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deletes) != n {
		t.Errorf("%d heads deleted, want %d", len(deletes), n)
	}
	for name, k := range deletes {
		if k != 1 {
			t.Errorf("%s deleted %d times", name, k)
		}
	}
	if got := strings.Count(w.out.String(), "result=deleted"); got != n {
		t.Errorf("%d deleted lines, want %d", got, n)
	}
	if e.healEvents() != 2*n {
		t.Errorf("%d RayHeadHealed Events, want %d", e.healEvents(), 2*n)
	}
}

func (e *env) healEvents() int {
	n := 0
	for _, a := range e.kc.Actions() {
		if c, ok := a.(k8stesting.CreateActionImpl); ok && a.GetResource().Resource == "events" {
			if ev, ok := c.Object.(*corev1.Event); ok && ev.Reason == repair.EventReason {
				n++
			}
		}
	}
	return n
}
