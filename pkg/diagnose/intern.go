package diagnose

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// A decoded pod holds its own copy of everything: the labels KubeRay puts on each pod (the same
// set on every worker of a group), its namespace, node, owner, container name, image and
// condition types are the same few values across thousands of pods. At 20,000 pods those
// copies were a fifth of doctor's heap and of the watchdog's cache (see docs/performance.md).
// Trimming replaces them with one shared copy each. Shared label maps and container slices
// are read-only: nothing in this program writes to a listed or cached object (client-go's
// caches require the same).
//
// Each table is bounded: when it holds maxInterned entries it starts again empty, so a watchdog
// that runs for months over clusters that come and go (a RayJob makes a cluster of a new name
// each time) does not keep every name it ever saw. Starting again costs only sharing, never
// correctness: a value is the same whichever copy holds it.
const maxInterned = 1 << 16

// table is one bounded table of shared values, by key.
type table[T any] struct {
	sync.Mutex
	m map[string]T
}

func (t *table[T]) shared(key string, v T) T {
	t.Lock()
	defer t.Unlock()
	if c, ok := t.m[key]; ok {
		return c
	}
	if t.m == nil || len(t.m) >= maxInterned {
		t.m = make(map[string]T)
	}
	t.m[key] = v
	return v
}

func (t *table[T]) len() int {
	t.Lock()
	defer t.Unlock()
	return len(t.m)
}

var (
	strs       table[string]
	labelSets  table[map[string]string]
	containers table[[]corev1.Container]
)

// intern returns the shared copy of s.
func intern(s string) string {
	if s == "" {
		return s
	}
	return strs.shared(s, s)
}

// internLabels returns the shared map equal to in.
func internLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return in
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		// A NUL cannot occur in a label key or value, so the joined form is unambiguous.
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(in[k])
		b.WriteByte(0)
	}
	return labelSets.shared(b.String(), in)
}

// rayContainer returns the shared one-element container list that a trimmed pod keeps: the
// first container's name, which KubeRay takes as the Ray container.
func rayContainer(name string) []corev1.Container {
	return containers.shared(name, []corev1.Container{{Name: intern(name)}})
}
