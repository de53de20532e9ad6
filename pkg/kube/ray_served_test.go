package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	"k8s.io/client-go/rest"
)

// A Ray object read as served comes typed, and with its JSON as the API server wrote it: a
// field of a newer KubeRay release (v1.7.0's spec.networkPolicy) that the typed object drops is
// in it. Pages follow their continue token; the selector is sent.
func TestListRayClustersAsServed(t *testing.T) {
	pages := map[string]string{
		"": `{"apiVersion":"ray.io/v1","kind":"RayClusterList","metadata":{"continue":"p2"},"items":[` +
			`{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"a","namespace":"ml"},"spec":{"networkPolicy":{"mode":"DenyAll"},"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.52.0"}]}}}}}]}`,
		"p2": `{"apiVersion":"ray.io/v1","kind":"RayClusterList","metadata":{},"items":[` +
			`{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"b","namespace":"ml"},"spec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head"}]}}}}}]}`,
	}
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		q := r.URL.Query()
		if r.URL.Path != "/apis/ray.io/v1/namespaces/ml/rayclusters" || q.Get("labelSelector") != "team=a" || q.Get("limit") == "" {
			t.Errorf("request %s", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(pages[q.Get("continue")]))
	}))
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	c := &Clients{Config: cfg, Ray: rayclient.NewForConfigOrDie(cfg)}

	served := map[string]string{}
	got, err := c.ListRayClustersAsServed(context.Background(), "ml", "team=a", func(rc *rayv1.RayCluster, raw []byte) {
		served[rc.Name] = string(raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	if requests != 2 || len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" || got[0].Spec.HeadGroupSpec.Template.Spec.Containers[0].Image != "rayproject/ray:2.52.0" {
		t.Fatalf("%d requests, clusters %+v", requests, got)
	}
	if !strings.Contains(served["a"], `"networkPolicy":{"mode":"DenyAll"}`) || !strings.HasPrefix(served["b"], `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"b"`) {
		t.Errorf("the JSON as served: %v", served)
	}
}
