package state

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestInternSharesOneCopy(t *testing.T) {
	a, b := strings.Clone("ray.io/node-type"), strings.Clone("ray.io/node-type")
	if unsafe.StringData(a) == unsafe.StringData(b) {
		t.Fatal("the test needs two copies to start with")
	}
	if unsafe.StringData(intern(a)) != unsafe.StringData(intern(b)) {
		t.Fatal("equal strings interned to different copies")
	}
	if c := shared.rayContainer(strings.Clone("ray-worker")); &c[0] != &shared.rayContainer("ray-worker")[0] || c[0].Name != "ray-worker" {
		t.Fatal("container lists of one name not shared")
	}
}

func TestInternLabelsSharesEqualSets(t *testing.T) {
	worker := func(cluster string) map[string]string {
		return map[string]string{"ray.io/cluster": cluster, "ray.io/node-type": "worker", "ray.io/group": "small-group"}
	}
	a, b, other := internLabels(worker("rc-1")), internLabels(worker("rc-1")), internLabels(worker("rc-2"))
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Fatal("equal label sets not shared")
	}
	if !reflect.DeepEqual(other, worker("rc-2")) || reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(other).UnsafePointer() {
		t.Fatalf("different label sets shared or changed: %v", other)
	}
	// Keys and values must not run together: {"a": "bc"} is not {"ab": "c"}.
	if x, y := internLabels(map[string]string{"a": "bc"}), internLabels(map[string]string{"ab": "c"}); x["a"] != "bc" || y["ab"] != "c" {
		t.Fatalf("label sets confused: %v %v", x, y)
	}
}

// A watchdog interns the names of clusters that come and go for months: the table must not keep
// them all.
func TestInternIsBounded(t *testing.T) {
	for i := 0; i < maxInterned+10; i++ {
		if s := fmt.Sprint("rayjob-", i); intern(s) != s {
			t.Fatalf("intern(%q) changed the value", s)
		}
	}
	if n := strs.len(); n > maxInterned {
		t.Fatalf("%d strings interned, more than the bound %d", n, maxInterned)
	}
}

// RayClusters made from one sample carry equal requests and limits, and a cluster's pods name
// one owner: each is kept once. Different values stay apart.
func TestInternSharesResourcesAndOwners(t *testing.T) {
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	a, b, c := internResources(list("1", "2Gi")), internResources(list("1", "2Gi")), internResources(list("1", "3Gi"))
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Fatal("equal resource lists not shared")
	}
	if q := c[corev1.ResourceMemory]; q.String() != "3Gi" {
		t.Fatalf("a different resource list was shared: %v", c)
	}
	owner := func(uid string, controller *bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "rc", UID: types.UID(uid), Controller: controller}}
	}
	o1, o2 := internOwners(owner("u1", ptr.To(true))), internOwners(owner("u1", ptr.To(true)))
	if &o1[0] != &o2[0] {
		t.Fatal("equal owner lists not shared")
	}
	if o := internOwners(owner("u2", ptr.To(true))); o[0].UID != "u2" {
		t.Fatalf("another owner's list was shared: %v", o)
	}
	if o := internOwners(owner("u1", nil)); o[0].Controller != nil {
		t.Fatalf("an owner list with controller unset shared one with it set: %v", o)
	}
}
