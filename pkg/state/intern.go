package state

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// hashed is a bounded table of shared composite values (label sets, resource lists, owner lists)
// by a hash of their joined form: the joined form itself, as a table's key, was 4 MB of doctor's
// heap at 4,000 RayClusters. A value is shared only when it equals the one held (its joined form
// is the same), so a collision costs sharing, never correctness.
type hashed[T any] struct {
	sync.Mutex
	m      map[uint64]T
	joined func(T) string
	// equal says whether a value equals the one held under its hash: the joined forms' equality,
	// told without joining the held one again.
	equal func(a, b T) bool
	// kept, when not nil, is what the table holds of a value it has not seen (its strings
	// shared, say).
	kept func(T) T
}

var seed = maphash.MakeSeed()

func (t *hashed[T]) shared(v T) T {
	key := t.joined(v)
	h := maphash.String(seed, key)
	t.Lock()
	defer t.Unlock()
	if c, ok := t.m[h]; ok {
		if t.equal(c, v) {
			return c
		}
		return v
	}
	if t.m == nil || len(t.m) >= maxInterned {
		t.m = make(map[uint64]T)
	}
	if t.kept != nil {
		v = t.kept(v)
	}
	t.m[h] = v
	return v
}

var (
	strs       table[string]
	containers table[[]corev1.Container]
	labelSets  = hashed[map[string]string]{joined: func(m map[string]string) string { return mapKey(m, func(v string) string { return v }) },
		equal: maps.Equal[map[string]string, map[string]string], kept: internedMap}
	resources = hashed[corev1.ResourceList]{joined: func(l corev1.ResourceList) string {
		return mapKey(l, func(q resource.Quantity) string { return q.String() })
	}, equal: func(a, b corev1.ResourceList) bool {
		// Equal as printed (a Quantity prints its canonical form: 1000m prints as 1).
		return maps.EqualFunc(a, b, func(x, y resource.Quantity) bool { return x.String() == y.String() })
	}}
	owners = hashed[[]metav1.OwnerReference]{joined: ownersKey, equal: func(a, b []metav1.OwnerReference) bool {
		return reflect.DeepEqual(a, b)
	}}
	// keptContainers are a group template's containers as trimmed (specTemplate): the same in
	// every RayCluster made from one chart or sample. Joined as JSON, so that a field trimming
	// comes to keep is compared too.
	keptContainers = hashed[[]corev1.Container]{joined: func(cs []corev1.Container) string {
		b, err := json.Marshal(cs)
		if err != nil {
			return fmt.Sprintf("%p", cs) // never shared with another
		}
		return string(b)
	}, equal: func(a, b []corev1.Container) bool { return reflect.DeepEqual(a, b) }}
)

// intern returns the shared copy of s.
func intern(s string) string {
	if s == "" {
		return s
	}
	return strs.shared(s, s)
}

// internLabels returns the shared map equal to in: a label set, or any string map (a group's
// rayStartParams).
func internLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return in
	}
	return labelSets.shared(in)
}

// internResources returns the shared list equal to in: the requests and limits of a group's
// containers, the same in every RayCluster made from one chart or sample (four maps a cluster,
// 13 MB of doctor's heap at 4,000 RayClusters).
func internResources(in corev1.ResourceList) corev1.ResourceList {
	if len(in) == 0 {
		return in
	}
	return resources.shared(in)
}

// internOwners returns the shared owner list equal to in: a cluster's pods name the same owner.
func internOwners(in []metav1.OwnerReference) []metav1.OwnerReference {
	if len(in) == 0 {
		return in
	}
	return owners.shared(in)
}

// ownersKey is an owner list joined, its pointers by their values.
func ownersKey(in []metav1.OwnerReference) string {
	var b strings.Builder
	for _, o := range in {
		b.WriteString(o.APIVersion + "\x00" + o.Kind + "\x00" + o.Name + "\x00" + string(o.UID) + "\x00")
		for _, p := range []*bool{o.Controller, o.BlockOwnerDeletion} {
			if p == nil {
				b.WriteString("-")
			} else {
				b.WriteString(strconv.FormatBool(*p))
			}
		}
		b.WriteByte(0)
	}
	return b.String()
}

// internedMap is a copy of m with its keys and values shared: each RayCluster's pods carry a
// label set of their own (ray.io/cluster), whose keys and most values are the same everywhere.
func internedMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

// mapKey is m's entries joined in key order. A NUL cannot occur in a label key or value, a
// resource name or a quantity, so the joined form is unambiguous.
func mapKey[K ~string, V any](m map[K]V, value func(V) string) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(string(k))
		b.WriteByte(0)
		b.WriteString(value(m[k]))
		b.WriteByte(0)
	}
	return b.String()
}

// sharing says whether trimming shares the values that repeat (shared: the tables above) or
// leaves each object its own (unshared: for an object encoded as soon as it is trimmed, whose
// shared copies nothing would read).
type sharing bool

const (
	shared   sharing = true
	unshared sharing = false
)

func (sh sharing) str(s string) string {
	if sh {
		return intern(s)
	}
	return s
}

// meta shares the strings of an object's metadata that repeat across objects: its namespace,
// labels and owners.
func (sh sharing) meta(m *metav1.ObjectMeta) {
	if !sh {
		return
	}
	m.Namespace, m.GenerateName = intern(m.Namespace), intern(m.GenerateName)
	m.Labels = internLabels(m.Labels)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind, o.Name, o.UID = intern(o.APIVersion), intern(o.Kind), intern(o.Name), types.UID(intern(string(o.UID)))
	}
	m.OwnerReferences = internOwners(m.OwnerReferences)
}

// rayContainer is the one-element container list that a trimmed pod keeps: the first
// container's name, which KubeRay takes as the Ray container.
func (sh sharing) rayContainer(name string) []corev1.Container {
	if !sh {
		return []corev1.Container{{Name: name}}
	}
	return containers.shared(name, []corev1.Container{{Name: intern(name)}})
}
