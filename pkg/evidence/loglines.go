package evidence

import (
	"encoding/json"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
)

// The watchdog's disk is ephemeral and lost with its pod, so its evidence goes to its own
// structured log, which the cluster's log collection keeps (docs/heal.md says why not an
// object in the cluster). Every line of one pod's evidence carries evidence=UID, so
//
//	kubectl logs deploy/kubectl-ray-heal | grep 'evidence=UID'
//
// finds all of it. The lines are bounded: a log pipeline splits or drops long lines (the
// container runtime cuts lines at 16 KiB), and a watchdog that heals a crash loop must not flood
// its log.
const (
	// MaxLineBytes caps the text of one line: a log's tail, the pod's status.
	MaxLineBytes = 8 << 10
	// MaxEventLines is how many of the pod's Events are logged, the newest.
	MaxEventLines = 20
)

// Line is one log line: its message and its fields, alternating keys and values.
type Line struct {
	Msg string
	KV  []any
}

// LogLines are the evidence as the watchdog logs it: one line that says what was kept, the pod's
// status (its phase, reason, and each container's state and last termination: an OOM kill's
// exit code), its newest Events, and each container log's last MaxLineBytes.
func (ev Evidence) LogLines() []Line {
	id := []any{"evidence", string(ev.Pod.UID), "pod", ev.Pod.Namespace + "/" + ev.Pod.Name}
	with := func(kv ...any) []any { return append(append([]any{}, id...), kv...) }
	lines := []Line{{Msg: "evidence kept before delete", KV: with(
		"rule", ev.Rule, "cluster", ev.Cluster.Namespace+"/"+ev.Cluster.Name, "kept", ev.Summary())}}
	if st := ev.status(); st != "" {
		lines = append(lines, Line{Msg: "evidence pod status", KV: with("status", tail(st))})
	}
	events := ev.Events
	if len(events) > MaxEventLines {
		events = events[len(events)-MaxEventLines:]
	}
	for i := range events {
		e := &events[i]
		lines = append(lines, Line{Msg: "evidence event", KV: with(
			"type", e.Type, "reason", e.Reason, "count", strconv.Itoa(int(max(e.Count, 1))),
			"lastSeen", artifact.EventTime(e).UTC().Format(time.RFC3339), "message", tail(e.Message))})
	}
	for _, l := range ev.Logs {
		lines = append(lines, Line{Msg: "evidence log", KV: with(
			"container", l.Container, "previous", strconv.FormatBool(l.Previous), "bytes", strconv.Itoa(len(l.Data)),
			"log", tail(string(l.Data)))})
	}
	for _, g := range ev.Gaps {
		lines = append(lines, Line{Msg: "evidence not kept", KV: with("what", g.What, "reason", g.Reason)})
	}
	return lines
}

// status is the pod's status from the redacted YAML, as compact JSON: what the pod was when heal
// deleted it.
func (ev Evidence) status() string {
	var pod corev1.Pod
	if err := yaml.Unmarshal(ev.PodYAML, &pod); err != nil {
		return ""
	}
	b, err := json.Marshal(pod.Status)
	if err != nil {
		return ""
	}
	return string(b)
}

// tail is the last MaxLineBytes of s, marked when cut: the end of a log says why it stopped.
func tail(s string) string {
	if len(s) <= MaxLineBytes {
		return s
	}
	return "[cut to the last " + strconv.Itoa(MaxLineBytes) + " bytes] " + s[len(s)-MaxLineBytes:]
}
