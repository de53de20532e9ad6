package kube

import (
	"bytes"
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// protobufMagic starts every protobuf-encoded response of the API server.
var protobufMagic = []byte("k8s\x00")

// podPage reads one page of a LIST of pods and trims each pod as it is decoded. Through the
// typed client a page is decoded whole before anything can be trimmed: full pods are ~10 kB in
// memory, so the page's full pods, not its bytes (~3.5 kB a pod as protobuf), set the price
// of a page (at 2,000 a page that was 35 MB more at doctor's peak at 5,000 pods). A
// protobuf response is walked item by item instead (a PodList is field 1, its ListMeta, then
// field 2 once per pod), so only the response's bytes and one full pod are held. A JSON
// response (a server or proxy that does not speak protobuf) and clients without a REST client
// (client-go's fakes) take the typed path.
func (c *Clients) podPage(ctx context.Context, namespace string, o metav1.ListOptions, trim func(*corev1.Pod)) (Page[corev1.Pod], error) {
	rc, ok := c.Kube.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return c.typedPodPage(ctx, namespace, o, trim)
	}
	raw, err := rc.Get().Namespace(namespace).Resource("pods").VersionedParams(&o, scheme.ParameterCodec).Do(ctx).Raw()
	if err != nil {
		return Page[corev1.Pod]{}, err
	}
	if !bytes.HasPrefix(raw, protobufMagic) {
		var l corev1.PodList
		if err := decodeInto(raw, &l); err != nil {
			return Page[corev1.Pod]{}, err
		}
		return trimmedPods(&l, trim), nil
	}
	list, err := protoField(raw[len(protobufMagic):], 2) // runtime.Unknown: field 2 is the object
	if err != nil {
		return Page[corev1.Pod]{}, fmt.Errorf("decoding a page of pods: %w", err)
	}
	return decodePodList(list, trim)
}

func (c *Clients) typedPodPage(ctx context.Context, namespace string, o metav1.ListOptions, trim func(*corev1.Pod)) (Page[corev1.Pod], error) {
	l, err := c.Kube.CoreV1().Pods(namespace).List(ctx, o)
	if err != nil {
		return Page[corev1.Pod]{}, err
	}
	return trimmedPods(l, trim), nil
}

func trimmedPods(l *corev1.PodList, trim func(*corev1.Pod)) Page[corev1.Pod] {
	for i := range l.Items {
		trim(&l.Items[i])
	}
	return Page[corev1.Pod]{Items: l.Items, Continue: l.Continue}
}

func decodeInto(raw []byte, l *corev1.PodList) error {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, l)
	if err != nil {
		return fmt.Errorf("decoding a page of pods: %w", err)
	}
	if obj != l {
		return fmt.Errorf("decoding a page of pods: got %T", obj)
	}
	return nil
}

// decodePodList decodes a protobuf PodList one pod at a time, trimming each before the next.
func decodePodList(b []byte, trim func(*corev1.Pod)) (Page[corev1.Pod], error) {
	var meta metav1.ListMeta
	n := 0
	err := eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return meta.Unmarshal(v)
		case 2:
			n++
		}
		return nil
	})
	if err != nil {
		return Page[corev1.Pod]{}, fmt.Errorf("decoding a page of pods: %w", err)
	}
	items := make([]corev1.Pod, 0, n)
	err = eachField(b, func(num protowire.Number, v []byte) error {
		if num != 2 {
			return nil
		}
		items = append(items, corev1.Pod{})
		p := &items[len(items)-1]
		if err := p.Unmarshal(v); err != nil {
			return err
		}
		trim(p)
		return nil
	})
	if err != nil {
		return Page[corev1.Pod]{}, fmt.Errorf("decoding a page of pods: %w", err)
	}
	return Page[corev1.Pod]{Items: items, Continue: meta.Continue}, nil
}

// protoField returns the bytes of the first length-delimited field num of message b.
func protoField(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	found := false
	err := eachField(b, func(n protowire.Number, v []byte) error {
		if n == num && !found {
			out, found = v, true
		}
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("field %d missing", num)
	}
	return out, err
}

// eachField calls f with every length-delimited field of message b (the only kind a List and
// runtime.Unknown hold at their top level); other wire types are skipped.
func eachField(b []byte, f func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if err := f(num, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
