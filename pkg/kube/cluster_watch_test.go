package kube

import (
	"context"
	"testing"
	"time"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	kfake "k8s.io/client-go/kubernetes/fake"
)

// The error channel of a head kill's watches is closed once they end, so whoever reads it (the
// command's warning printer) ends with them.
func TestHeadKillWatchErrorsEndWithTheWatches(t *testing.T) {
	c := &Clients{Kube: kfake.NewClientset(), Ray: rayfake.NewSimpleClientset()}
	ctx, cancel := context.WithCancel(context.Background())
	errs, err := c.RunClusterWatch(ctx, context.Background(), ClusterWatch{Namespace: "ml", PodSelector: "ray.io/cluster=demo", Cluster: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, open := <-errs:
		if open {
			t.Fatal("an error arrived instead of the end")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the error channel stayed open after the watches ended")
	}
}
