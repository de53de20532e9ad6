package workerkill

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// PlanKind identifies a worker kill's dry-run plan (`--dry-run -o json`).
const PlanKind = "WorkerKillPlan"

// Plan is what a worker kill would do, checked by the API server's dry run of each kill; nothing
// was killed and no request was sent.
type Plan struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Settings   ReportSettings `json:"settings"`
	RayCluster string         `json:"rayCluster"`
	Group      string         `json:"group"`
	Live       int            `json:"liveWorkers"`
	Kill       []string       `json:"kill"` // NAMESPACE/NAME, by name
	// ServeReplicas are, with --serve-replicas, the replicas Ray's view places on each worker
	// to kill (by NAMESPACE/NAME).
	ServeReplicas   map[string][]string  `json:"serveReplicas,omitempty"`
	Endpoints       []string             `json:"endpoints"`
	PlannedRequests int                  `json:"plannedRequests"`
	SLO             availability.PlanSLO `json:"slo"`
	ServerDryRun    string               `json:"serverDryRun"` // "accepted"
}

// DryRun says exactly which workers a run with this seed would kill; each kill is dry-run on the
// API server first (RBAC, admission, PodDisruptionBudgets), so a plan is returned only once the
// server accepted every one. No port-forward is opened, no request is sent.
func DryRun(ctx context.Context, c Cluster, s Settings) (*Plan, error) {
	s.DryRun = true
	t, err := experiment.Resolved(&s, func() (*target, error) { return resolve(ctx, c, &s) })
	if err != nil {
		return nil, err
	}
	for i := range t.chosen {
		if err := c.KillPod(ctx, &t.chosen[i], kube.KillMode(s.Mode), true); err != nil {
			return nil, killError(err)
		}
	}
	p := &Plan{APIVersion: schema.APIVersion, Kind: PlanKind, Settings: s.reportSettings(t), RayCluster: t.cluster, Group: t.group,
		Live: t.live, Kill: []string{}, PlannedRequests: probe.Planned(s.config().Rate, s.Warmup+s.Post()),
		SLO: s.PlanSLO(), ServerDryRun: "accepted", ServeReplicas: t.chosenReplicas()}
	for _, pod := range t.chosen {
		p.Kill = append(p.Kill, pod.Namespace+"/"+pod.Name)
	}
	if p.Endpoints, err = experiment.PlanEndpoints(ctx, c, s.Namespace, t.service, t.portName); err != nil {
		return nil, err
	}
	return p, nil
}

// WritePlanText writes the plan for a person.
func WritePlanText(w io.Writer, p *Plan) error {
	var b strings.Builder
	s := p.Settings
	fmt.Fprintf(&b, "Dry run of a worker kill of %s in namespace %s: nothing is killed and no request is sent.\n", s.Target, s.Namespace)
	fmt.Fprintf(&b, "Would %s:  %s of %d live workers of group %s of RayCluster %s, chosen with seed %d (%s %d picks the same ones again)%s:\n",
		s.Mode, availability.Plural(len(p.Kill), "worker", "workers"), p.Live, p.Group, p.RayCluster, s.Seed, "--seed", s.Seed, amongHosts(s.ServeReplicas))
	for _, k := range p.Kill {
		fmt.Fprintf(&b, "  %s%s\n", k, replicaList(p.ServeReplicas[k]))
	}
	fmt.Fprintf(&b, "Would probe:  %s %s%s at %v/s, warm-up %dms (the workers are killed only if every warm-up request succeeds), about %s\n",
		s.Method, s.Probe, s.Path, s.Rate, s.WarmupMs, availability.Plural(p.PlannedRequests, "request", "requests"))
	if len(p.Endpoints) > 0 {
		fmt.Fprintf(&b, "Endpoints:    %s\n", strings.Join(p.Endpoints, ", "))
	}
	fmt.Fprintf(&b, "SLO:          %s\n", p.SLO)
	fmt.Fprintf(&b, "The API server accepted a dry run of each kill.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
