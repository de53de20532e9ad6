package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"

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
// protobuf response is read from the wire item by item instead (a PodList is field 1, its
// ListMeta, then field 2 once per pod), so only one pod's bytes and one full pod are held at a
// time, whatever the page's size: pages can grow (PodPageLimit) without the page's bytes
// costing memory. A JSON response (a server or proxy that does not speak protobuf) is decoded
// whole, and clients without a REST client (client-go's fakes) take the typed path.
func (c *Clients) podPage(ctx context.Context, namespace string, o metav1.ListOptions, trim func(*corev1.Pod)) (Page[corev1.Pod], error) {
	rc, ok := c.Kube.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return c.typedPodPage(ctx, namespace, o, trim)
	}
	body, err := rc.Get().Namespace(namespace).Resource("pods").VersionedParams(&o, scheme.ParameterCodec).Stream(ctx)
	if err != nil {
		return Page[corev1.Pod]{}, err
	}
	defer body.Close()
	r := bufio.NewReaderSize(body, 64<<10)
	if head, _ := r.Peek(len(protobufMagic)); !bytes.Equal(head, protobufMagic) {
		raw, err := io.ReadAll(r)
		if err != nil {
			return Page[corev1.Pod]{}, fmt.Errorf("reading a page of pods: %w", err)
		}
		var l corev1.PodList
		if err := decodeInto(raw, &l); err != nil {
			return Page[corev1.Pod]{}, err
		}
		return trimmedPods(&l, trim), nil
	}
	_, _ = r.Discard(len(protobufMagic))
	page, err := readPodList(&wire{r: r}, int(o.Limit), trim)
	if err != nil {
		return Page[corev1.Pod]{}, fmt.Errorf("decoding a page of pods: %w", err)
	}
	return page, nil
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

// maxItemBytes bounds one pod's bytes on the wire: a pod is at most etcd's 1.5 MiB request
// limit, so anything larger is not a pod but a broken stream.
const maxItemBytes = 16 << 20

// readPodList reads a runtime.Unknown (field 2 is the object) holding a protobuf PodList from r,
// decoding and trimming one pod at a time; limit (the page size asked for) sizes the items.
func readPodList(r *wire, limit int, trim func(*corev1.Pod)) (Page[corev1.Pod], error) {
	var (
		meta  metav1.ListMeta
		items = make([]corev1.Pod, 0, min(max(limit, 0), 10_000))
		buf   []byte
		found bool
	)
	for {
		num, typ, err := r.tag()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Page[corev1.Pod]{}, err
		}
		if num != 2 || typ != protowire.BytesType {
			if err := r.skip(typ); err != nil {
				return Page[corev1.Pod]{}, err
			}
			continue
		}
		size, err := r.uvarint()
		if err != nil {
			return Page[corev1.Pod]{}, err
		}
		found = true
		end := r.n + int64(size)
		for r.n < end {
			num, typ, err := r.tag()
			if err != nil {
				return Page[corev1.Pod]{}, unexpected(err)
			}
			if typ != protowire.BytesType || (num != 1 && num != 2) {
				if err := r.skip(typ); err != nil {
					return Page[corev1.Pod]{}, err
				}
				continue
			}
			if buf, err = r.bytes(buf); err != nil {
				return Page[corev1.Pod]{}, err
			}
			if num == 1 {
				if err := meta.Unmarshal(buf); err != nil {
					return Page[corev1.Pod]{}, err
				}
				continue
			}
			items = append(items, corev1.Pod{})
			p := &items[len(items)-1]
			// Unmarshal copies what it keeps (strings, byte fields), so buf is reused.
			if err := p.Unmarshal(buf); err != nil {
				return Page[corev1.Pod]{}, err
			}
			trim(p)
		}
		if r.n != end {
			return Page[corev1.Pod]{}, fmt.Errorf("the list overran its length")
		}
	}
	if !found {
		return Page[corev1.Pod]{}, fmt.Errorf("no object in the response")
	}
	return Page[corev1.Pod]{Items: items, Continue: meta.Continue}, nil
}

// wire reads protobuf fields from a stream and counts the bytes it consumed.
type wire struct {
	r *bufio.Reader
	n int64
}

func (w *wire) ReadByte() (byte, error) {
	b, err := w.r.ReadByte()
	if err == nil {
		w.n++
	}
	return b, err
}

// uvarint reads a varint; io.EOF only when the stream ended before it.
func (w *wire) uvarint() (uint64, error) {
	start := w.n
	v, err := binary.ReadUvarint(w)
	if err == io.EOF && w.n > start {
		err = io.ErrUnexpectedEOF
	}
	return v, err
}

func (w *wire) tag() (protowire.Number, protowire.Type, error) {
	t, err := w.uvarint()
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.Number(t>>3), protowire.Type(t&7)
	if !num.IsValid() {
		return 0, 0, fmt.Errorf("invalid field number %d", num)
	}
	return num, typ, nil
}

// bytes reads a length-delimited value into buf, grown as needed.
func (w *wire) bytes(buf []byte) ([]byte, error) {
	size, err := w.uvarint()
	if err != nil {
		return buf, unexpected(err)
	}
	if size > maxItemBytes {
		return buf, fmt.Errorf("a field of %d bytes", size)
	}
	if cap(buf) < int(size) {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	n, err := io.ReadFull(w.r, buf)
	w.n += int64(n)
	return buf, unexpected(err)
}

// skip reads past a value of wire type typ.
func (w *wire) skip(typ protowire.Type) error {
	var n uint64
	switch typ {
	case protowire.VarintType:
		_, err := w.uvarint()
		return unexpected(err)
	case protowire.Fixed32Type:
		n = 4
	case protowire.Fixed64Type:
		n = 8
	case protowire.BytesType:
		size, err := w.uvarint()
		if err != nil {
			return unexpected(err)
		}
		n = size
	default:
		return fmt.Errorf("unsupported wire type %d", typ)
	}
	d, err := w.r.Discard(int(n))
	w.n += int64(d)
	return unexpected(err)
}

// unexpected is err, with an end of stream in the middle of a value said as such.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
