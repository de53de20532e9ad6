package kube

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

func pagePods(n int) *corev1.PodList {
	l := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{Continue: "next-page", ResourceVersion: "42"}}
	for i := 0; i < n; i++ {
		l.Items = append(l.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("rc-worker-", i), Namespace: "ml", UID: "uid", ResourceVersion: fmt.Sprint(i),
				Labels: map[string]string{"ray.io/cluster": "rc"}, Annotations: map[string]string{"big": "x"}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray",
				Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "pw-secret"}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
				ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-worker", RestartCount: int32(i), ContainerID: "containerd://x"}}},
		})
	}
	return l
}

// podsServer answers every LIST of pods with list, encoded as contentType asks.
func podsServer(t *testing.T, list *corev1.PodList, contentType string) *Clients {
	t.Helper()
	var body []byte
	switch contentType {
	case runtime.ContentTypeProtobuf:
		s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
		b, err := runtime.Encode(s, list)
		if err != nil {
			t.Fatal(err)
		}
		body = b
	default:
		b, err := runtime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion), list)
		if err != nil {
			t.Fatal(err)
		}
		body = b
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/ml/pods" || r.URL.Query().Get("limit") != "2000" || r.URL.Query().Get("labelSelector") != "ray.io/is-ray-node=yes" {
			t.Errorf("request %s", r.URL)
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	cfg := Protobuf(&rest.Config{Host: srv.URL})
	return &Clients{Config: cfg, Kube: kubernetes.NewForConfigOrDie(cfg)}
}

// trimForTest is a trim as the loader's (state.TrimPod, which this package does not know):
// it drops the spec's containers and the annotations, and keeps the secret values it drops.
func trimForTest(secrets map[string]bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, c := range p.Spec.Containers {
			for _, e := range c.Env {
				secrets[e.Value] = true
			}
		}
		p.Annotations, p.Spec.Containers = nil, nil
	}
}

// A page is trimmed pod by pod as it is decoded, and comes out as the typed path gives it.
func TestPodPageDecodesAndTrims(t *testing.T) {
	want := pagePods(3)
	for i := range want.Items {
		trimForTest(map[string]bool{})(&want.Items[i])
	}
	for _, ct := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		t.Run(ct, func(t *testing.T) {
			c := podsServer(t, pagePods(3), ct)
			secrets := map[string]bool{}
			trimmed := 0
			trim := trimForTest(secrets)
			page, err := c.podPage(context.Background(), "ml", metav1.ListOptions{LabelSelector: "ray.io/is-ray-node=yes", Limit: 2000},
				func(p *corev1.Pod) { trimmed++; trim(p) })
			if err != nil {
				t.Fatal(err)
			}
			if page.Continue != "next-page" || trimmed != 3 || len(page.Items) != 3 {
				t.Fatalf("continue %q, %d trimmed, %d items", page.Continue, trimmed, len(page.Items))
			}
			for i := range page.Items {
				page.Items[i].TypeMeta = metav1.TypeMeta{} // the typed path's items carry none either
				if !reflect.DeepEqual(page.Items[i], want.Items[i]) {
					t.Errorf("pod %d:\n got %+v\nwant %+v", i, page.Items[i], want.Items[i])
				}
			}
			if !secrets["pw-secret"] {
				t.Error("the trimmed Redis password is not known to the redactor")
			}
		})
	}
}

// A stream cut anywhere inside the object, or with no object, is an error, never a short page.
func TestPodPageRefusesGarbage(t *testing.T) {
	read := func(b []byte) error {
		_, err := readPodList(&wire{r: bufio.NewReader(bytes.NewReader(b))}, 0, func(*corev1.Pod) {})
		return err
	}
	if err := read([]byte{0x12, 0x05, 0x01}); err == nil {
		t.Fatal("a truncated PodList decoded")
	}
	if err := read(nil); err == nil {
		t.Fatal("an empty response decoded")
	}
	whole, err := runtime.Encode(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), pagePods(2))
	if err != nil {
		t.Fatal(err)
	}
	whole = whole[len(protobufMagic):]
	if err := read(whole); err != nil {
		t.Fatalf("the whole page: %v", err)
	}
	// The Unknown envelope ends with the object's content fields (empty strings): cutting
	// there still leaves the whole object. Every cut inside the object must fail.
	obj, end := objectSpan(t, whole)
	for cut := obj; cut < end; cut++ {
		if err := read(whole[:cut]); err == nil {
			t.Fatalf("a page cut at byte %d of %d decoded", cut, len(whole))
		}
	}
}

// objectSpan is where runtime.Unknown's field 2 (the object) starts and ends in b.
func objectSpan(t *testing.T, b []byte) (start, end int) {
	t.Helper()
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			t.Fatal(protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[i+n:])
		if num == 2 {
			return i, i + n + m
		}
		i += n + m
	}
	t.Fatal("no object")
	return 0, 0
}

// A refusal comes back as the API's error, so Explain can name the verb and resource.
func TestPodPageForbidden(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"pods is forbidden"}`))
	}))
	defer srv.Close()
	cfg := Protobuf(&rest.Config{Host: srv.URL})
	c := &Clients{Config: cfg, Kube: kubernetes.NewForConfigOrDie(cfg)}
	_, err := c.podPage(context.Background(), "", metav1.ListOptions{}, func(*corev1.Pod) {})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v, want a Forbidden API error", err)
	}
}
