package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// What RBAC refuses the watchdog's informers is named with its verb: a role with list but not
// watch is told to add watch; Events that may not be listed leave it blind to recreate loops,
// and say why (the hack/chart RBAC test removes each rule of the chart and reads these lines).
func TestInformersNameTheRefusedVerb(t *testing.T) {
	RouteClientLogs(func(string, string, ...any) {})
	forbid := func(resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", nil)
	}
	for _, c := range []struct {
		name, verb, resource string
		want, blind          string
	}{
		{name: "watch pods", verb: "watch", resource: "pods",
			want: `forbidden: you cannot watch pods in namespace "ml"; ask for RBAC verb "watch" on "pods" (check with: kubectl auth can-i watch pods -n ml)`},
		{name: "list pods", verb: "list", resource: "pods",
			want: `forbidden: you cannot list pods in namespace "ml"; ask for RBAC verb "list" on "pods" (check with: kubectl auth can-i list pods -n ml)`},
		{name: "watch events", verb: "watch", resource: "events",
			want: `forbidden: you cannot watch events in namespace "ml"`},
		{name: "list events", verb: "list", resource: "events",
			blind: `forbidden: you cannot list events in namespace "ml"; ask for RBAC verb "list" on "events"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			kc := kfake.NewClientset()
			if c.verb == "watch" {
				kc.PrependWatchReactor(c.resource, func(k8stesting.Action) (bool, watch.Interface, error) {
					return true, nil, forbid(c.resource)
				})
			} else {
				kc.PrependReactor("list", c.resource, func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, forbid(c.resource)
				})
			}
			cl := &Clients{Kube: kc, Ray: rayfake.NewSimpleClientset()}
			h, err := cl.NewClusterInformers("ml", false, CacheShape{EventSelector: "involvedObject.kind=RayCluster"}, func(types.NamespacedName) {})
			if err != nil {
				t.Fatal(err)
			}
			if got := h.EventsBlind(); !strings.HasPrefix(got, c.blind) || (c.blind == "") != (got == "") {
				t.Errorf("EventsBlind() = %q, want %q...", got, c.blind)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = h.Start(ctx)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Start: %v, want it to run without Events", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("Start: %v\nwant %s...", err, c.want)
			}
		})
	}
}
