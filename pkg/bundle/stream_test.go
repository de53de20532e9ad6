package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// What the Stream renders of the objects as they are listed, before the loader trims them, is
// what Render writes of the whole snapshot: the same files, bytes, index lines, logs asked for
// and secrets handed to the text pass, with the snapshot trimmed as doctor's.
// servedJSON is o's JSON as the API server would serve it: its fields, managedFields and all.
func servedJSON(t *testing.T, o any) []byte {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestStreamAsWhole(t *testing.T) {
	whole := scene()
	whole.Pods[0].Spec.Containers[0].Env = append(whole.Pods[0].Spec.Containers[0].Env, envVar("DB_PASSWORD", "stream-pw-1"))
	want := Render(whole, MakePlan(whole, nil, PlanOptions{Logs: true}), Collected{}, nil)

	s := scene()
	s.Pods[0].Spec.Containers[0].Env = append(s.Pods[0].Spec.Containers[0].Env, envVar("DB_PASSWORD", "stream-pw-1"))
	st := NewStream()
	secrets := redact.Set{}
	for i := range s.Clusters {
		st.Cluster(&s.Clusters[i], servedJSON(t, &s.Clusters[i]))
		state.TrimCluster(&s.Clusters[i], secrets)
	}
	for i := range s.Pods {
		st.Pod(&s.Pods[i])
		state.TrimPod(&s.Pods[i], secrets)
	}
	for i := range s.Nodes {
		st.Node(&s.Nodes[i])
		state.TrimNode(&s.Nodes[i])
	}
	st.Close()
	p := MakePlan(s, nil, PlanOptions{Logs: true, Stream: st})
	if wp := MakePlan(whole, nil, PlanOptions{Logs: true}); !reflect.DeepEqual(p.Logs, wp.Logs) {
		t.Errorf("logs asked for %v, whole %v", p.Logs, wp.Logs)
	}
	got := Render(s, p, Collected{}, st)

	files := map[string][]byte{}
	for _, f := range got.Files {
		files[f.Path] = f.Data
	}
	for _, f := range got.Spooled {
		files[f.Path] = f.packed.unpack()
	}
	if len(got.Spooled) != 5+3 { // two clusters, three pods, three nodes with pods
		t.Errorf("%d files from the stream, want 8", len(got.Spooled))
	}
	for _, f := range want.Files {
		if !bytes.Equal(files[f.Path], f.Data) {
			t.Errorf("%s:\n%s\nwhole:\n%s", f.Path, files[f.Path], f.Data)
		}
		delete(files, f.Path)
	}
	if len(files) != 0 {
		t.Errorf("files Render does not write of the whole snapshot: %v", files)
	}
	if g, w := indexLines(got), indexLines(want); g != w {
		t.Errorf("the index lists\n%s\nwhole\n%s", g, w)
	}
	if _, ok := st.Secrets()["stream-pw-1"]; !ok {
		t.Error("the stream did not hand the env's secret to the text pass")
	}
}

func indexLines(c Contents) string {
	var b bytes.Buffer
	for _, f := range ordered(c.listed()) {
		b.WriteString(f.Path + " | " + f.About + "\n")
	}
	return b.String()
}

func envVar(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

// A renderer writes every object over one buffer: what the text pass learned of an object (a
// provider token only gitleaks knows, a bearer token the shapes find, in annotations) is still
// that value, exactly, after the objects rendered after it overwrote the buffer.
func TestStreamLearnedOutlivesItsBuffer(t *testing.T) {
	token, bearer := "ghp_"+"R7xq2LmN8pVs4Tz9Wb6Yc1Dk3Fh5Jg0AeQuI", "eyBearerTok3n-5f8a2c9d7e1b"
	st := NewStream()
	for i := range 50 {
		p := &corev1.Pod{}
		p.Name, p.Namespace = fmt.Sprintf("p-%02d", i), "ml"
		p.Annotations = map[string]string{"note": strings.Repeat(fmt.Sprintf("filler %d ", i), 40)}
		if i == 0 {
			// The largest object first: the buffer never grows after it, each later one is
			// written over it.
			p.Annotations["pad"] = strings.Repeat("padding ", 200)
			p.Annotations["note"] = "deploy with " + token + " then run"
			p.Annotations["curl"] = "curl -H 'Authorization: Bearer " + bearer + "' https://svc"
		}
		st.Pod(p)
	}
	st.Close()
	for _, v := range []string{token, bearer} {
		if _, ok := st.Secrets()[v]; !ok {
			t.Errorf("%s, learned from the first pod, is not among the secrets: %q", v, st.Secrets())
		}
	}
	for v := range st.Secrets() {
		if strings.Contains(v, "filler") {
			t.Errorf("a learned value holds another object's text: %q", v)
		}
	}
}
