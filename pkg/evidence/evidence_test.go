package evidence

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// planted is a secret value in the pod's env; the log and an Event echo it.
const planted = "pw-planted-7f3a9c"

var taken = time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)

// fakeSource answers the evidence reads from maps, and records what was asked.
type fakeSource struct {
	events    []corev1.Event
	eventsErr error
	logs      map[string]string // CONTAINER or CONTAINER/previous -> log
	logErr    map[string]error
	asked     []string
}

func (f *fakeSource) ListEventsAbout(_ context.Context, _ string, _ types.UID) ([]corev1.Event, error) {
	return f.events, f.eventsErr
}

func (f *fakeSource) PodLog(_ context.Context, _, _ string, o *corev1.PodLogOptions) ([]byte, error) {
	key := o.Container
	if o.Previous {
		key += "/previous"
	}
	f.asked = append(f.asked, key)
	if err := f.logErr[key]; err != nil {
		return nil, err
	}
	return []byte(f.logs[key]), nil
}

// crashingHead is a head whose ray-head container restarted once and whose autoscaler sidecar
// runs, with a Redis password in its env.
func crashingHead() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "ray-head-abc", UID: "0123456789abcdef"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "ray-head", Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: planted}}},
			{Name: "autoscaler"},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "ray-head", RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}},
			{Name: "autoscaler", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
}

func subject(pod *corev1.Pod) Subject {
	return Subject{Pod: pod, Cluster: state.Ref{Namespace: "ml", Name: "ray"}, Rule: "head-crashloop", Why: "restarted"}
}

func TestTakeKeepsCurrentAndPreviousLogsRedacted(t *testing.T) {
	src := &fakeSource{
		events: []corev1.Event{
			{Reason: "BackOff", Message: "second", LastTimestamp: metav1.NewTime(taken.Add(-time.Minute))},
			{Reason: "Started", Message: "first, with " + planted, LastTimestamp: metav1.NewTime(taken.Add(-time.Hour))},
		},
		logs: map[string]string{
			"ray-head":          "connecting to redis with password " + planted + "\n",
			"ray-head/previous": "Traceback: killed\n",
			"autoscaler":        "scaling\n",
		},
	}
	ev := Taker{Src: src, Limits: Limits, Now: func() time.Time { return taken }}.Take(context.Background(), subject(crashingHead()), nil)

	if got, want := strings.Join(src.asked, ","), "ray-head,ray-head/previous,autoscaler"; got != want {
		t.Errorf("logs read %s, want %s", got, want)
	}
	var names []string
	for _, l := range ev.Logs {
		names = append(names, l.Name())
	}
	if got, want := strings.Join(names, ","), "ray-head.log,ray-head.previous.log,autoscaler.log"; got != want {
		t.Errorf("logs kept %s, want %s", got, want)
	}
	if ev.Events[0].Reason != "Started" {
		t.Errorf("Events not oldest first: %v", ev.Events)
	}
	if len(ev.Gaps) != 0 {
		t.Errorf("gaps %v, want none", ev.Gaps)
	}
	for _, f := range ev.Files() {
		if strings.Contains(string(f.Data), planted) {
			t.Errorf("%s holds the planted secret:\n%s", f.Path, f.Data)
		}
	}
	for _, l := range ev.LogLines() {
		if s := fmt.Sprint(l.KV...); strings.Contains(s, planted) {
			t.Errorf("log line %q holds the planted secret: %s", l.Msg, s)
		}
	}
	if !strings.Contains(string(ev.PodYAML), "OOMKilled") {
		t.Errorf("pod.yaml lost the last termination:\n%s", ev.PodYAML)
	}
}

func TestTakeListsWhatItCouldNotRead(t *testing.T) {
	src := &fakeSource{
		eventsErr: errors.New(`forbidden: you cannot list events in namespace "ml"`),
		logs:      map[string]string{"ray-head": "ok\n", "autoscaler": "ok\n"},
		logErr:    map[string]error{"ray-head/previous": errors.New("previous terminated container not found")},
	}
	ev := Taker{Src: src, Limits: Limits}.Take(context.Background(), subject(crashingHead()), nil)
	if len(ev.Logs) != 2 || len(ev.Gaps) != 2 {
		t.Fatalf("logs %d, gaps %v; want 2 logs kept and 2 gaps", len(ev.Logs), ev.Gaps)
	}
	index := string(ev.Files()[0].Data)
	for _, want := range []string{"## Not kept", "list events about pod ray-head-abc: forbidden", "log of container ray-head (previous): previous terminated"} {
		if !strings.Contains(index, want) {
			t.Errorf("index.md lacks %q:\n%s", want, index)
		}
	}
	if s := ev.Summary(); !strings.Contains(s, "2 reads failed (forbidden") {
		t.Errorf("summary %q does not say what was not read", s)
	}
}

func TestWriteDirLeavesOnlyTheEvidence(t *testing.T) {
	src := &fakeSource{logs: map[string]string{"ray-head": "now\n", "ray-head/previous": "before\n", "autoscaler": "a\n"}}
	ev := Taker{Src: src, Limits: Limits, Now: func() time.Time { return taken }}.Take(context.Background(), subject(crashingHead()), nil)
	root := t.TempDir()
	for range 2 { // kept again (a re-plan): replaced, not duplicated
		dir, err := WriteDir(root, ev)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(root, "ml", "ray-head-abc-01234567"); dir != want {
			t.Fatalf("dir %s, want %s", dir, want)
		}
	}
	var got []string
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(root, p)
			got = append(got, rel)
		}
		return nil
	})
	want := "ml/ray-head-abc-01234567/events.txt,ml/ray-head-abc-01234567/index.md,ml/ray-head-abc-01234567/logs/autoscaler.log," +
		"ml/ray-head-abc-01234567/logs/ray-head.log,ml/ray-head-abc-01234567/logs/ray-head.previous.log,ml/ray-head-abc-01234567/pod.yaml"
	if strings.Join(got, ",") != want {
		t.Errorf("files\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	b, _ := os.ReadFile(filepath.Join(root, "ml", "ray-head-abc-01234567", "logs", "ray-head.previous.log"))
	if string(b) != "before\n" {
		t.Errorf("previous log %q", b)
	}
}

func TestWriteDirOnAFileFails(t *testing.T) {
	root := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(root, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ev := Evidence{Pod: state.Ref{Namespace: "ml", Name: "p", UID: "u"}}
	if _, err := WriteDir(root, ev); err == nil || !strings.Contains(err.Error(), "cannot create evidence directory") {
		t.Errorf("err %v, want cannot create evidence directory", err)
	}
}

func TestLogLinesAreBounded(t *testing.T) {
	ev := Evidence{Pod: state.Ref{Namespace: "ml", Name: "p", UID: "u1"},
		Logs: []Log{{Container: "ray-head", Data: []byte(strings.Repeat("x", 3*MaxLineBytes) + "the end")}}}
	for i := range 30 {
		ev.Events = append(ev.Events, corev1.Event{Reason: fmt.Sprintf("R%d", i)})
	}
	lines := ev.LogLines()
	events := 0
	for _, l := range lines {
		kv := map[string]string{}
		for i := 0; i+1 < len(l.KV); i += 2 {
			kv[l.KV[i].(string)] = fmt.Sprint(l.KV[i+1])
		}
		if kv["evidence"] != "u1" || kv["pod"] != "ml/p" {
			t.Errorf("line %q lacks evidence=u1 pod=ml/p: %v", l.Msg, kv)
		}
		switch l.Msg {
		case "evidence event":
			events++
		case "evidence log":
			if n := len(kv["log"]); n > MaxLineBytes+64 || !strings.HasSuffix(kv["log"], "the end") || !strings.HasPrefix(kv["log"], "[cut") {
				t.Errorf("log field of %d bytes, want the marked last %d bytes", n, MaxLineBytes)
			}
		}
	}
	if events != MaxEventLines {
		t.Errorf("%d event lines, want the newest %d", events, MaxEventLines)
	}
	if lines[0].Msg != "evidence kept before delete" {
		t.Errorf("first line %q", lines[0].Msg)
	}
}

type podGetter struct{ pod *corev1.Pod }

func (g podGetter) GetPodByName(context.Context, string, string) (*corev1.Pod, error) {
	return g.pod, nil
}

func TestKeeperRefusesAReplacedPod(t *testing.T) {
	put := 0
	k := Keeper{Taker: Taker{Src: &fakeSource{}}, Pods: podGetter{crashingHead()},
		Put: func(Evidence) (string, error) { put++; return "x", nil }}
	_, err := k.Keep(context.Background(), repair.Action{Pod: state.Ref{Namespace: "ml", Name: "ray-head-abc", UID: "another"}})
	if err == nil || !strings.Contains(err.Error(), "not kept: the pod was replaced") || put != 0 {
		t.Errorf("err %v, put %d; want not kept, nothing put", err, put)
	}
}

func TestKeeperSaysWhereItKeptDespiteAnError(t *testing.T) {
	pod := crashingHead()
	src := &fakeSource{logs: map[string]string{"ray-head": "a", "ray-head/previous": "b", "autoscaler": "c"}}
	a := repair.Action{Pod: state.Ref{Namespace: "ml", Name: pod.Name, UID: string(pod.UID)}}
	k := Keeper{Taker: Taker{Src: src}, Pods: podGetter{pod},
		Put: func(Evidence) (string, error) { return "the log", errors.New("disk full") }}
	where, err := k.Keep(context.Background(), a)
	if where != "the log" || err == nil || err.Error() != "kept in the log only: disk full" {
		t.Errorf("where %q, err %v", where, err)
	}
	k.Put = func(Evidence) (string, error) { return "", errors.New("disk full") }
	if where, err := k.Keep(context.Background(), a); where != "" || err == nil || err.Error() != "not kept: disk full" {
		t.Errorf("where %q, err %v", where, err)
	}
	k.Put = func(Evidence) (string, error) { return "dir", nil }
	src.logErr = map[string]error{"autoscaler": errors.New("no kubelet")}
	if where, err := k.Keep(context.Background(), a); where != "dir" || err == nil || err.Error() != "kept without 1 read (log of container autoscaler: no kubelet)" {
		t.Errorf("where %q, err %v", where, err)
	}
}
