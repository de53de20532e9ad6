package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// The informers' first LIST is paged (resourceVersion "0" would be answered in one piece from the
// API server's cache) and each page is trimmed before the next is read.
func TestTrimmedPages(t *testing.T) {
	secrets := map[string]bool{}
	h := &ClusterInformers{shape: CacheShape{Trim: func(obj any) { trimForTest(secrets)(obj.(*corev1.Pod)) }}}
	var asked metav1.ListOptions
	lw := h.trimmedPages(&cache.ListWatch{ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
		asked = o
		return &corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"big": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "s3cret"}}}}}}}}, nil
	}})
	obj, err := lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if asked.ResourceVersion != "" || asked.Limit != 500 {
		t.Errorf("listed with %+v, want resourceVersion \"\" and limit 500", asked)
	}
	p := obj.(*corev1.PodList).Items[0]
	if len(p.Spec.Containers) != 0 || len(p.Annotations) != 0 {
		t.Errorf("page not trimmed: %+v", p)
	}
	if !secrets["s3cret"] {
		t.Errorf("the trim did not see the page's pod: %v", secrets)
	}
}
