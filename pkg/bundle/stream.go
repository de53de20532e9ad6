package bundle

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/s2"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// Stream renders the objects of the snapshot's LISTs that a bundle writes (RayClusters, pods,
// nodes, Redis cleanup Jobs) as each page arrives, before the loader trims them: each is
// written as JSON on the LIST's goroutine, then, on a few renderers, redacted by its structure,
// rendered as JSON, read by the text pass (what its text shows by shape is learned, for every
// file) and kept compressed until the archive is written. So the snapshot is trimmed as doctor's
// is, no whole object is held, and rendering runs while the pages are still coming. Render
// takes each file from here; the objects the plan does not pick are never written.
type Stream struct {
	work chan rendering
	wg   sync.WaitGroup

	mu      sync.Mutex
	dicts   map[string]*s2.Dict // by kind: the first file rendered of it
	files   map[string]spooled
	found   redact.Set // what the structure showed
	learned redact.Set // what the text showed by its shape
	logs    map[string][]artifact.LogRequest
}

// rendering is one object waiting for a renderer.
type rendering struct {
	path, apiVersion, kind string
	raw                    []byte
}

// spooled is a rendered file, compressed, with the fields the structural pass redacted whole.
type spooled struct {
	packed   packed
	problems []redact.Problem
}

// packed is a file compressed with s2 against its kind's dictionary (nil: none). Compressed
// alone, a pod's JSON keeps about half its size; against another pod's, under a tenth (the
// bench fleet's 5,000 pods: 30.5 MB of JSON held in 2.1 MB until the archive is written).
type packed struct {
	data []byte
	dict *s2.Dict
}

// NewStream starts the renderers, one a core; Close stops them.
func NewStream() *Stream {
	n := runtime.GOMAXPROCS(0)
	st := &Stream{work: make(chan rendering, 4*n), dicts: map[string]*s2.Dict{}, files: map[string]spooled{}, found: redact.Set{}, learned: redact.Set{},
		logs: map[string][]artifact.LogRequest{}}
	for range n {
		st.wg.Add(1)
		go st.render()
	}
	return st
}

// Close waits for every object handed over to be rendered. Nothing may be handed over after.
func (st *Stream) Close() {
	close(st.work)
	st.wg.Wait()
}

func (st *Stream) render() {
	defer st.wg.Done()
	var scratch, rendered []byte
	for r := range st.work {
		found := redact.Set{}
		data, problems := artifact.AppendJSONObject(rendered, r.apiVersion, r.kind, r.raw, found)
		scratch = st.keep(r.path, r.kind, data, problems, found, scratch)
		rendered = data[:0] // keep holds none of it
	}
}

// keep learns what data shows by its shape and keeps it compressed under path; it returns the
// compressor's buffer for the next file. It holds nothing of data when it returns: the text pass
// reads it in place, and what it learns is copied (redact.Set.Add).
func (st *Stream) keep(path, kind string, data []byte, problems []redact.Problem, found redact.Set, scratch []byte) []byte {
	learned := redact.Set{}
	text := unsafe.String(unsafe.SliceData(data), len(data))
	if isJSON(path) {
		learned.AddFreeTextJSON(text)
	} else {
		learned.AddFreeText(text)
	}
	p := st.pack(kind, data, scratch)
	scratch = p.data[:0]
	p.data = append([]byte(nil), p.data...) // Encode's buffer is larger than what it wrote
	st.mu.Lock()
	st.files[path] = spooled{packed: p, problems: problems}
	st.found.Merge(found)
	st.learned.Merge(learned)
	st.mu.Unlock()
	return scratch
}

// Keep takes a file read beyond the snapshot (a container's log, a Ray log file), as soon as it
// is read: it is learned and kept compressed like the objects, so that a bundle's logs are not
// held whole until the archive is written. Safe for concurrent use, after Close too.
func (st *Stream) Keep(path string, data []byte) {
	st.keep(path, "log", data, nil, nil, nil)
}

// pack compresses data against kind's dictionary, which the first file of the kind makes.
func (st *Stream) pack(kind string, data, dst []byte) packed {
	st.mu.Lock()
	d, ok := st.dicts[kind]
	if !ok {
		// A copy: the dictionary holds its bytes, and data is a renderer's buffer.
		st.dicts[kind] = s2.MakeDict(bytes.Clone(data), nil)
	}
	st.mu.Unlock()
	if d == nil {
		return packed{data: s2.Encode(dst[:cap(dst)], data)}
	}
	return packed{data: d.Encode(dst[:cap(dst)], data), dict: d}
}

// hand writes obj as JSON, now (the caller trims it when this returns), for a renderer.
func (st *Stream) hand(path, apiVersion, kind string, obj any) {
	raw, err := json.Marshal(obj)
	if err != nil {
		// Rendered later from the snapshot's copy, which says why it could not be.
		return
	}
	st.work <- rendering{path: path, apiVersion: apiVersion, kind: kind, raw: raw}
}

// Pod takes a Ray or submitter pod whole, and the container logs a bundle would read of it
// (the snapshot keeps only its first container).
func (st *Stream) Pod(p *corev1.Pod) {
	logs := artifact.PodLogs(p)
	st.mu.Lock()
	st.logs[p.Namespace+"/"+p.Name] = logs
	st.mu.Unlock()
	c := *p
	c.ManagedFields = nil
	st.hand(nsPath(p.Namespace, "pods", p.Name), "v1", "Pod", &c)
}

// Cluster takes a RayCluster with its JSON as served, which keeps the fields the API types drop
// (a newer release's spec.networkPolicy, say): the bundle writes what the cluster holds.
func (st *Stream) Cluster(rc *rayv1.RayCluster, raw []byte) {
	st.served(nsPath(rc.Namespace, "rayclusters", rc.Name), "RayCluster", raw)
}

// RayService takes a RayService with its JSON as served.
func (st *Stream) RayService(rs *rayv1.RayService, raw []byte) {
	st.served(nsPath(rs.Namespace, "rayservices", rs.Name), "RayService", raw)
}

// RayJob takes a RayJob with its JSON as served.
func (st *Stream) RayJob(j *rayv1.RayJob, raw []byte) {
	st.served(nsPath(j.Namespace, "rayjobs", j.Name), "RayJob", raw)
}

// RayCronJob takes a RayCronJob with its JSON as served: the plugin reads its schedule alone, the
// bundle keeps it whole (its jobTemplate too).
func (st *Stream) RayCronJob(c *ray.RayCronJob, raw []byte) {
	st.served(nsPath(c.Namespace, "raycronjobs", c.Name), ray.KindRayCronJob, raw)
}

// served hands a Ray object's JSON as served (the caller's to give) to a renderer; the
// rendering drops its managedFields.
func (st *Stream) served(path, kind string, raw []byte) {
	st.work <- rendering{path: path, apiVersion: "ray.io/v1", kind: kind, raw: raw}
}

// Node takes a node whole; what a bundle keeps of it is nodeView.
func (st *Stream) Node(n *corev1.Node) {
	st.hand(nodePath(n.Name), "v1", "Node", nodeView(n))
}

// Job takes a Redis cleanup Job whole.
func (st *Stream) Job(j *batchv1.Job) {
	c := *j
	c.ManagedFields = nil
	st.hand(nsPath(j.Namespace, "jobs", j.Name), "batch/v1", "Job", &c)
}

// take is the file rendered for path, once.
func (st *Stream) take(path string) (spooled, bool) {
	if st == nil {
		return spooled{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.files[path]
	delete(st.files, path)
	return f, ok
}

// podLogs is the container logs of the pod as it was listed whole.
func (st *Stream) podLogs(p *corev1.Pod) []artifact.LogRequest {
	st.mu.Lock()
	defer st.mu.Unlock()
	if logs, ok := st.logs[p.Namespace+"/"+p.Name]; ok {
		return logs
	}
	return artifact.PodLogs(p)
}

// Secrets are the values the rendered objects showed, by their structure and by their text's
// shape, for the redactor of the whole archive: a value one file shows is redacted in all.
func (st *Stream) Secrets() redact.Set {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := redact.Set{}
	out.Merge(st.found)
	out.Merge(st.learned)
	return out
}

// unpack is a spooled file's bytes.
func (p packed) unpack() []byte {
	var data []byte
	var err error
	if p.dict == nil {
		data, err = s2.Decode(nil, p.data)
	} else {
		data, err = p.dict.Decode(nil, p.data)
	}
	if err != nil {
		// s2 wrote it in this process; a failure is a bug, and the file is dropped, not written raw.
		return []byte("# this file could not be read back from memory\n")
	}
	return data
}
