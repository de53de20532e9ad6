package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// tarOf is a tar stream as `tar cf - -C DIR .` writes it: the directory entries, then files.
func tarOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755})
	for i := 0; i+1 < len(files); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: "./" + files[i], Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[i+1]))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	return b.Bytes()
}

func TestUnpackRayLogs(t *testing.T) {
	stream := tarOf(t, "raylet.out", "raylet started\n", "gcs_server.out", strings.Repeat("g", 100), "events/event_GCS.log", "{}\n")
	files, err := UnpackRayLogs(stream, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, fmt.Sprintf("%s:%d:%q", f.Name, len(f.Data), f.Cut))
	}
	if want := `events/event_GCS.log:3:"" gcs_server.out:100:"" raylet.out:15:""`; strings.Join(got, " ") != want {
		t.Errorf("files %v, want %s", got, want)
	}

	// keep: each file's end.
	files, _ = UnpackRayLogs(stream, false, 10)
	for _, f := range files {
		if f.Name == "gcs_server.out" && (string(f.Data) != strings.Repeat("g", 10) || !strings.Contains(f.Cut, "last 10 of 100 bytes")) {
			t.Errorf("kept of gcs_server.out: %q, %q", f.Data, f.Cut)
		}
	}

	// A stream cut at the exec's limit, inside gcs_server.out: raylet.out whole, the cut file's
	// start kept and said so, nothing after it; no error.
	cut := bytes.Index(stream, []byte("ggg")) + 40
	files, err = UnpackRayLogs(stream[:cut], true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "gcs_server.out" || len(files[0].Data) != 40 || !strings.Contains(files[0].Cut, "first 40 of 100 bytes") ||
		files[1].Name != "raylet.out" || files[1].Cut != "" {
		t.Errorf("a cut stream: %+v", files)
	}
	// The same bytes not said to be cut are a broken stream.
	if _, err := UnpackRayLogs(stream[:cut], false, 0); err == nil {
		t.Error("a short stream not marked truncated: no error")
	}
}

// Only a running head's Ray container is exec'd into: not a worker, not a head still starting
// or being deleted.
func TestHeadRayLogs(t *testing.T) {
	s := scene()
	if r, ok := HeadRayLogs(&s.Pods[0]); !ok || r != (RayLogRequest{Namespace: "ml", Pod: "a-head", Container: "ray-head"}) || r.Dir() != "ray-logs/ml/a-head" {
		t.Errorf("running head: %+v %v", r, ok)
	}
	if _, ok := HeadRayLogs(&s.Pods[1]); ok {
		t.Error("a worker's Ray logs planned")
	}
	gone := s.Pods[2].DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{Time: now}
	waiting := s.Pods[2].DeepCopy()
	waiting.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	for _, p := range []*corev1.Pod{gone, waiting} {
		if _, ok := HeadRayLogs(p); ok {
			t.Errorf("planned for %+v", p.Status)
		}
	}
	if p := MakePlan(s, nil, PlanOptions{Logs: true, RayLogs: true}); len(p.RayLogs) != 2 {
		t.Errorf("plan's Ray logs %+v, want both heads", p.RayLogs)
	}
	if p := MakePlan(s, nil, PlanOptions{Logs: false, RayLogs: true}); len(p.RayLogs) != 0 {
		t.Errorf("--no-logs planned Ray logs %+v", p.RayLogs)
	}
}

// Each head's Ray log files are read with one exec, land under ray-logs/NS/POD/, and an exec
// that fails (no tar) or is cut at --ray-log-bytes is listed in the index with the reason.
func TestCollectRayLogs(t *testing.T) {
	s := scene()
	p := MakePlan(s, nil, PlanOptions{Logs: true, RayLogs: true})
	stream := tarOf(t, "raylet.out", strings.Repeat("r", 600), "gcs_server.out", "gcs up\n")
	src := &source{tars: map[string]tarAnswer{"a-head": {stream: stream}, "b-head": {err: fmt.Errorf("%w", kube.ErrNoTar)}}}
	got := Collect(context.Background(), src, p, CollectOptions{Parallel: 4})
	if len(src.execs) != 2 || !strings.HasSuffix(src.execs[0], ":"+RayLogsDir) {
		t.Errorf("execs %v, want one per head of %s", src.execs, RayLogsDir)
	}
	c := Render(s, p, got, nil)
	var paths []string
	for _, f := range c.Files {
		if strings.HasPrefix(f.Path, "ray-logs/") {
			paths = append(paths, f.Path+" ("+f.About+")")
		}
	}
	want := "ray-logs/ml/a-head/gcs_server.out (Ray's log file gcs_server.out from the head's /tmp/ray/session_latest/logs) " +
		"ray-logs/ml/a-head/raylet.out (Ray's log file raylet.out from the head's /tmp/ray/session_latest/logs)"
	if strings.Join(paths, " ") != want {
		t.Errorf("Ray log files:\n%s\nwant\n%s", strings.Join(paths, "\n"), want)
	}
	var gaps []string
	for _, g := range got.Gaps {
		if strings.Contains(g.What, "Ray's log files") {
			gaps = append(gaps, g.What+": "+g.Reason)
		}
	}
	if len(gaps) != 1 || !strings.Contains(gaps[0], "ml/b-head") || !strings.Contains(gaps[0], "has no tar") {
		t.Errorf("gaps %v, want b-head's image without tar", gaps)
	}

	// Cut at 700 bytes: inside raylet.out (tar's headers are 512 bytes each).
	src = &source{tars: map[string]tarAnswer{"a-head": {stream: stream}, "b-head": {stream: stream}}}
	got = Collect(context.Background(), src, p, CollectOptions{Parallel: 4, RayLogBytes: 1200})
	gaps = nil
	for _, g := range got.Gaps {
		if strings.Contains(g.What, "Ray's log files") {
			gaps = append(gaps, g.Reason)
		}
	}
	if len(gaps) != 2 || !strings.Contains(gaps[0], "cut at 1200 bytes (--ray-log-bytes)") {
		t.Errorf("gaps of cut reads: %v", gaps)
	}
	if fs := got.RayLogs[p.RayLogs[0]]; len(fs) != 1 || fs[0].Name != "raylet.out" || fs[0].Cut == "" {
		t.Errorf("a cut read keeps the start of the file it was cut in: %+v", fs)
	}
}
