package availability

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// The section every experiment that takes pods away shares (drain, worker-kill): each pod taken
// and what its eviction or delete met, and the Ray pods KubeRay created instead, built from the
// timeline of follow.Losses.

// Losses is the pods a step took and the Ray pods that came instead.
type Losses struct {
	Pods         []TakenPod    `json:"pods"`
	Replacements []Replacement `json:"replacements"`
}

// TakenPod is one pod the step took and what its eviction (or delete) met. Times are relative to
// the report's reference (the cordon, the kill).
type TakenPod struct {
	Pod         string   `json:"pod"` // NAMESPACE/NAME
	Ray         bool     `json:"ray"`
	RequestedMs *float64 `json:"requestedMs"` // the first request
	AcceptedMs  *float64 `json:"acceptedMs"`
	GoneMs      *float64 `json:"goneMs"`
	Refusals    int      `json:"refusals"`
	// RefusedBy is the last refusal's words (the budget first).
	RefusedBy string `json:"refusedBy,omitempty"`
	// Outcome: gone, accepted (not yet gone when the run ended), refused (still, at the end),
	// failed (an error), requested, or not requested.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Replacement is a Ray pod created after the step, where it went and when it was Ready.
type Replacement struct {
	Pod         string   `json:"pod"`
	What        string   `json:"what"` // "worker of group demo/small"
	Node        string   `json:"node,omitempty"`
	CreatedMs   float64  `json:"createdMs"`
	ScheduledMs *float64 `json:"scheduledMs"`
	ReadyMs     *float64 `json:"readyMs"`
}

// OutcomeRefused is a pod a budget still held when the run ended.
const OutcomeRefused = "refused"

// BuildLosses reads the timeline's events into one row per pod taken (pods, NAMESPACE/NAME, in
// order; ray says which are Ray pods) and one per new Ray pod.
func BuildLosses(events []Event, pods []string, ray map[string]bool) Losses {
	l := Losses{Pods: []TakenPod{}, Replacements: []Replacement{}}
	for _, name := range pods {
		l.Pods = append(l.Pods, TakenPod{Pod: name, Ray: ray[name], Outcome: "not requested"})
	}
	rows := map[string]*TakenPod{}
	for i := range l.Pods {
		rows[l.Pods[i].Pod] = &l.Pods[i]
	}
	fresh := map[string]*Replacement{}
	var order []string
	at := func(e Event) *float64 { v := e.AtMs; return &v }
	for _, e := range events {
		row := rows[e.Object]
		switch e.Kind {
		case timeline.EvictionRequested:
			if row != nil && row.RequestedMs == nil {
				row.RequestedMs, row.Outcome = at(e), "requested"
			}
		case timeline.EvictionAccepted:
			if row != nil && row.AcceptedMs == nil {
				row.AcceptedMs, row.Outcome = at(e), "accepted"
			}
		case timeline.EvictionRefused:
			if row != nil {
				row.Refusals++
				row.RefusedBy, row.Outcome = e.Detail, OutcomeRefused
			}
		case timeline.EvictionFailed:
			if row != nil && row.GoneMs == nil && row.AcceptedMs == nil {
				row.Detail = e.Detail
				if row.Outcome != OutcomeRefused {
					row.Outcome = "failed"
				}
			}
		case timeline.PodGone:
			if row != nil && row.GoneMs == nil {
				row.GoneMs, row.Outcome = at(e), "gone"
			}
		case timeline.RayPodCreated:
			fresh[e.Object] = &Replacement{Pod: e.Object, What: e.Detail, CreatedMs: e.AtMs}
			order = append(order, e.Object)
		case timeline.RayPodScheduled:
			if f := fresh[e.Object]; f != nil && f.ScheduledMs == nil {
				f.ScheduledMs, f.Node = at(e), e.Detail
			}
		case timeline.RayPodReady:
			if f := fresh[e.Object]; f != nil && f.ReadyMs == nil {
				f.ReadyMs = at(e)
			}
		}
	}
	for _, name := range order {
		l.Replacements = append(l.Replacements, *fresh[name])
	}
	sort.SliceStable(l.Replacements, func(i, j int) bool { return l.Replacements[i].CreatedMs < l.Replacements[j].CreatedMs })
	return l
}

// StillRefused names the pods a budget still held when the run ended, "" when none.
func (l Losses) StillRefused() string {
	var held []string
	for _, p := range l.Pods {
		if p.Outcome == OutcomeRefused {
			held = append(held, fmt.Sprintf("%s refused %s (%s)", p.Pod, Plural(p.Refusals, "time", "times"), p.RefusedBy))
		}
	}
	return strings.Join(held, "; ")
}

// Refusals counts every refusal.
func (l Losses) Refusals() int {
	n := 0
	for _, p := range l.Pods {
		n += p.Refusals
	}
	return n
}

// WriteLosses writes the pods table, the refusals, and the Ray pods KubeRay created after since
// ("the cordon", "the kill").
func WriteLosses(w io.Writer, l Losses, since string) error {
	p := &Printer{W: w}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  POD\tRAY\tREQUESTED\tACCEPTED\tGONE\tREFUSALS\tOUTCOME\n")
	for _, r := range l.Pods {
		ray := "-"
		if r.Ray {
			ray = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Pod, ray, OptSecs(r.RequestedMs), OptSecs(r.AcceptedMs), OptSecs(r.GoneMs), r.Refusals, r.Outcome)
	}
	p.Keep(tw.Flush())
	for _, r := range l.Pods {
		if r.RefusedBy != "" {
			p.F("  %s refused %s: %s\n", r.Pod, Plural(r.Refusals, "time", "times"), r.RefusedBy)
		}
		if r.Detail != "" {
			p.F("  %s: %s\n", r.Pod, r.Detail)
		}
	}
	p.F("\nRay pods KubeRay created after %s\n", since)
	if len(l.Replacements) == 0 {
		p.F("  none seen\n")
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range l.Replacements {
		node := r.Node
		if node == "" {
			node = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\tcreated %s\ton %s\tscheduled %s\tReady %s\n", r.Pod, r.What, Secs(r.CreatedMs), node, OptSecs(r.ScheduledMs), OptSecs(r.ReadyMs))
	}
	p.Keep(tw.Flush())
	return p.Err
}
