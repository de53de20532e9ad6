package diagnose

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func TestInternSharesOneCopy(t *testing.T) {
	a, b := strings.Clone("ray.io/node-type"), strings.Clone("ray.io/node-type")
	if unsafe.StringData(a) == unsafe.StringData(b) {
		t.Fatal("the test needs two copies to start with")
	}
	if unsafe.StringData(intern(a)) != unsafe.StringData(intern(b)) {
		t.Fatal("equal strings interned to different copies")
	}
	if c := rayContainer(strings.Clone("ray-worker")); &c[0] != &rayContainer("ray-worker")[0] || c[0].Name != "ray-worker" {
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
