package headkill

import (
	"io"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// PlanKind identifies a head kill's dry-run plan (`--dry-run -o json`), with schema.APIVersion.
const PlanKind = "HeadKillPlan"

// Plan is what a head kill would do, checked by the API server's dry run of the kill; nothing
// was killed and no request was sent.
type Plan struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Settings   ReportSettings `json:"settings"`
	Head       PlanHead       `json:"head"`
	// Kill is how the head would be killed, e.g. "delete (grace period 30s)".
	Kill string `json:"kill"`
	// Endpoints are the ready endpoints (pod:port) a Service target would be probed through, one
	// port-forward each; empty for a URL target.
	Endpoints []string `json:"endpoints"`
	// PlannedRequests is the warm-up's and the time after the kill's; MaxRequests adds what the
	// schedule allows while the warm-up drains and the kill's API calls run.
	PlannedRequests int                  `json:"plannedRequests"`
	MaxRequests     int                  `json:"maxRequests"`
	SLO             availability.PlanSLO `json:"slo"`
	// ServerDryRun is "accepted": a plan is printed only once the API server accepted the dry
	// run of the kill (RBAC, admission, PodDisruptionBudgets).
	ServerDryRun string `json:"serverDryRun"`
}

// PlanHead is the head pod the kill targets.
type PlanHead struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	RayCluster string `json:"rayCluster"`
}

// WritePlanText writes the plan for a person.
func WritePlanText(w io.Writer, p *Plan) error {
	pr := &availability.Printer{W: w}
	s := p.Settings
	pr.F("Dry run of a head kill of %s in namespace %s: nothing is killed and no request is sent.\n", s.Cluster, s.Namespace)
	pr.F("Would kill:   pod %s (head of RayCluster %s) by %s\n", p.Head.Name, p.Head.RayCluster, p.Kill)
	if s.TracksEndpoints() {
		pr.F("Would probe:  %s %s%s at %v/s through a port-forward to each of %s: %s\n",
			s.Method, s.Target, s.Path, s.Rate, availability.Plural(len(p.Endpoints), "ready endpoint", "ready endpoints"), strings.Join(p.Endpoints, ", "))
	} else {
		pr.F("Would probe:  %s %s%s at %v/s\n", s.Method, s.Target, s.Path, s.Rate)
	}
	after := millis(s.AfterMs).String()
	if s.UntilRecovered {
		after = "until recovered, at most " + millis(s.TimeoutMs).String()
	}
	pr.F("Schedule:     warm-up %s (the kill happens only if every warm-up request succeeds), then probe %s; request timeout %s; about %s (at most %d if the warm-up's last answers and the kill take their whole allowance)\n",
		millis(s.WarmupMs), after, millis(s.RequestTimeout), availability.Plural(p.PlannedRequests, "request", "requests"), p.MaxRequests)
	pr.F("SLO:          %s\n", p.SLO)
	pr.F("The API server accepted a dry run of the kill of pod %s/%s.\n", p.Head.Namespace, p.Head.Name)
	return pr.Err
}

func millis(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
