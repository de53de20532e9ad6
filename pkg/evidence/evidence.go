// Package evidence keeps what heal is about to destroy. Deleting a crash-looping or evicted pod
// deletes its logs and its last state with it: Ray's logs live in the pod (kuberay #1047,
// ray #44561), and the kubelet drops a deleted pod's container logs. So before heal deletes a
// pod it keeps the pod's YAML, the Events about it and the tail of each container's current and
// previous log, redacted as a bundle is. Take reads them (pure but for its Source); WriteDir and
// LogLines put them where they survive: a directory for one-shot heal, the watchdog's own log.
package evidence

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Source is the reads evidence makes: the Events about the pod (one LIST selected by its UID)
// and one GET per container log. *kube.Clients is one.
type Source interface {
	ListEventsAbout(ctx context.Context, namespace string, uid types.UID) ([]corev1.Event, error)
	PodLog(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) ([]byte, error)
}

// Taker takes a pod's evidence.
type Taker struct {
	Src Source
	// Limits cap each container log read; Since is not used (the last lines matter, however old).
	Limits artifact.LogLimits
	Now    func() time.Time
}

// Evidence is what was kept of one pod, redacted.
type Evidence struct {
	Pod     state.Ref
	Cluster state.Ref
	Rule    string
	Why     string
	Taken   time.Time
	// PodYAML is the pod as it was last read (no managedFields), secret values redacted.
	PodYAML []byte
	Events  []corev1.Event
	Logs    []Log
	// Gaps are the reads that failed, each with its reason: the heal goes ahead regardless.
	Gaps []artifact.Gap
}

// Log is one container log's tail.
type Log struct {
	Container string
	Init      bool
	Previous  bool
	Data      []byte
}

// Name is the log's file name: CONTAINER.log, or CONTAINER.previous.log for the instance
// before the last restart (what kubectl logs --previous shows).
func (l Log) Name() string {
	if l.Previous {
		return l.Container + ".previous.log"
	}
	return l.Container + ".log"
}

// Subject is the pod, the cluster and the rule a heal deletes it under: what the evidence is of.
type Subject struct {
	Pod     *corev1.Pod
	Cluster state.Ref
	Rule    string
	Why     string
}

// Take reads the Events about the pod and its containers' logs (those PodLogs asks for: the
// current log of each started container, the previous one of each that restarted) and renders
// the pod. s, when given, lends its secrets to the redactor (a Redis password of the RayCluster's
// spec that a log echoes). A read that fails is a Gap; Take itself never fails.
func (t Taker) Take(ctx context.Context, sub Subject, s *state.Snapshot) Evidence {
	pod := sub.Pod
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	ev := Evidence{Pod: state.PodRef(pod), Cluster: sub.Cluster, Rule: sub.Rule, Why: sub.Why, Taken: now()}
	found := redact.Set{}
	found.AddPodSpec(&pod.Spec)
	var problems []redact.Problem
	ev.PodYAML, problems = artifact.ObjectYAML("v1", "Pod", pod, found)
	for _, p := range problems {
		ev.Gaps = append(ev.Gaps, artifact.Gap{What: "pod YAML: field " + p.Field + " redacted whole", Reason: p.Reason})
	}

	events, err := t.Src.ListEventsAbout(ctx, pod.Namespace, pod.UID)
	if err != nil {
		ev.Gaps = append(ev.Gaps, artifact.Gap{What: "list events about pod " + pod.Name, Reason: err.Error()})
	}
	sort.SliceStable(events, func(i, j int) bool { return artifact.EventTime(&events[i]).Before(artifact.EventTime(&events[j])) })
	ev.Events = events

	limits := t.Limits
	limits.Since = 0
	for _, r := range artifact.PodLogs(pod) {
		data, err := artifact.LogBody(t.Src.PodLog(ctx, pod.Namespace, pod.Name, limits.Options(r.Container, r.Previous)))
		if err != nil {
			ev.Gaps = append(ev.Gaps, artifact.Gap{What: "log of " + describe(r), Reason: err.Error()})
			continue
		}
		ev.Logs = append(ev.Logs, Log{Container: r.Container, Init: r.Init, Previous: r.Previous, Data: data})
	}
	ev.redact(s, found)
	return ev
}

// redact runs every text through doctor's redactor, which knows the pod's and the snapshot's
// secret values, as a bundle does: a log that echoes a password is redacted too.
func (ev *Evidence) redact(s *state.Snapshot, found redact.Set) {
	if s == nil {
		s = &state.Snapshot{}
	}
	text := state.Redactor(s, found).String
	ev.PodYAML = []byte(text(string(ev.PodYAML)))
	ev.Why = text(ev.Why)
	for i := range ev.Events {
		ev.Events[i].Message = text(ev.Events[i].Message)
	}
	for i := range ev.Logs {
		ev.Logs[i].Data = []byte(text(string(ev.Logs[i].Data)))
	}
	for i := range ev.Gaps {
		ev.Gaps[i].Reason = text(ev.Gaps[i].Reason)
	}
}

func describe(r artifact.LogRequest) string {
	what := "container " + r.Container
	if r.Init {
		what = "init container " + r.Container
	}
	if r.Previous {
		what += " (previous)"
	}
	return what
}

// Summary is the evidence in one line: what was kept and what could not be.
func (ev Evidence) Summary() string {
	parts := []string{"pod YAML", plural(len(ev.Events), "Event"), plural(len(ev.Logs), "log")}
	s := strings.Join(parts, ", ")
	if len(ev.Gaps) > 0 {
		s += fmt.Sprintf("; %s failed (%s)", plural(len(ev.Gaps), "read"), ev.Gaps[0].Reason)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
