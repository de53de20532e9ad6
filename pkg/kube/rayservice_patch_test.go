package kube

import (
	"context"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// An invalid patch is bad input (exit 2 at the command), a conflict an API error; both one line.
func TestPatchRayServiceErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind fault.Kind
		want string
	}{
		{apierrors.NewInvalid(schema.GroupKind{Group: "ray.io", Kind: "RayService"}, "up", nil), fault.Invalid, "the API server refused the patch of RayService ml/up"},
		{apierrors.NewConflict(schema.GroupResource{Group: "ray.io", Resource: "rayservices"}, "up", nil), fault.API, "RayService ml/up changed since it was read: nothing was patched"},
	} {
		r := rayfake.NewSimpleClientset(&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "up"}})
		r.PrependReactor("patch", "rayservices", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, c.err })
		_, err := (&Clients{Ray: r}).PatchRayService(context.Background(), "ml", "up", []byte(`{}`), true)
		if fault.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v (kind %v), want kind %v with %q", c.err, err, fault.KindOf(err), c.kind, c.want)
		}
	}
}
