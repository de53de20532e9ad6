package diagnose

import (
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleRayServiceNoCluster: a RayService with no RayCluster at all, OperatorGrace after it was
// created. Every version creates the RayCluster of a new RayService in its first reconcile
// (reconcileRayCluster in rayservice_controller.go), so one without is refused: by the API
// server (a quota on rayclusters.ray.io, a webhook), or by the operator itself (v1.5.0+ validate
// the spec first and reconcile nothing of a refused one). The RayService-owned cluster rules
// never see such a RayService: it has no cluster to carry them. v1.5.0 and v1.6.0 say why in
// Warning Events (FailedToCreateRayCluster, InvalidRayServiceSpec) and the Ready condition;
// v1.1.1 records no Event about a RayService, only its log.
const RuleRayServiceNoCluster = "rayservice-no-cluster"

// serviceView is one RayService with the RayClusters the snapshot holds of it.
type serviceView struct {
	rs       *rayv1.RayService
	clusters []string // names, sorted
}

type serviceRule func(*index, *serviceView) []Finding

// serviceRules run on every RayService, in this order.
var serviceRules = []serviceRule{rayServiceNoCluster, suspendNotReached, incrementalUpgradeBlocked}

// ServiceReport is one RayService checked by the rules about the RayService itself (scope
// "rayservice-object"); the rules about its clusters are in their ClusterReports.
type ServiceReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Health    Health `json:"health"`
	// Clusters are its RayClusters in the snapshot: active, pending, or any it owns.
	Clusters []string `json:"clusters"`
}

// serviceViews are the RayServices, sorted, each with its clusters: those owned by it (see
// index.go: an owner reference, or the names its status records).
func (ix *index) serviceViews() []*serviceView {
	byService := map[string][]string{}
	for _, c := range ix.clusters {
		if c.owner != nil && c.owner.Kind == "RayService" {
			k := key(c.rc.Namespace, c.owner.Name)
			byService[k] = append(byService[k], c.rc.Name)
		}
	}
	out := make([]*serviceView, 0, len(ix.s.Services))
	for i := range ix.s.Services {
		rs := &ix.s.Services[i]
		names := byService[key(rs.Namespace, rs.Name)]
		sort.Strings(names)
		out = append(out, &serviceView{rs: rs, clusters: names})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].rs.Namespace != out[b].rs.Namespace {
			return out[a].rs.Namespace < out[b].rs.Namespace
		}
		return out[a].rs.Name < out[b].rs.Name
	})
	return out
}

// checked says whether doctor checks the RayService itself: always, or when t names it (a
// RayCluster target checks only its cluster). With -l, only RayServices with a cluster the
// selector listed: those have none here.
func (v *serviceView) checked(s *state.Snapshot, t *Target) bool {
	if s.ClustersSelected {
		return false
	}
	if t == nil {
		return true
	}
	kind := strings.ToLower(string(t.Kind))
	return (kind == "" || kind == "rayservice") && v.rs.Name == t.Name
}

func (v *serviceView) ref() state.Ref {
	return state.Ref{Kind: "RayService", Namespace: v.rs.Namespace, Name: v.rs.Name, UID: string(v.rs.UID)}
}

func (v *serviceView) report(fs []Finding) ServiceReport {
	clusters := v.clusters
	if clusters == nil {
		clusters = []string{}
	}
	return ServiceReport{Namespace: v.rs.Namespace, Name: v.rs.Name, UID: string(v.rs.UID), Health: HealthOf(fs), Clusters: clusters}
}

// rayServiceNoCluster: no RayCluster of the RayService exists, OperatorGrace after its creation.
func rayServiceNoCluster(ix *index, v *serviceView) []Finding {
	rs := v.rs
	if len(v.clusters) > 0 || rs.DeletionTimestamp != nil || ray.RayServiceSuspended(rs) {
		return nil // a RayService suspended by its own spec (KubeRay v1.7.0) owns no cluster by design
	}
	if ray.IncrementalUpgrade(rs) && ix.s.NoGatewayAPI && ix.incrementalUpgradeOn() {
		return nil // incremental-upgrade-blocked names the cause
	}
	old := ix.s.Now.Sub(rs.CreationTimestamp.Time)
	if old <= ix.opts.OperatorGrace {
		return nil // the operator creates the cluster in its first reconcile
	}
	ns, name := rs.Namespace, rs.Name
	ev := map[string]string{"age": age(old)}
	for k, n := range map[string]string{"activeCluster": rs.Status.ActiveServiceStatus.RayClusterName, "pendingCluster": rs.Status.PendingServiceStatus.RayClusterName} {
		if n != "" {
			ev[k] = n // named in the status, but not there
		}
	}
	why := "the operator reported nothing about it: no Warning Event in the last 20m (KubeRay v1.1.1 records none about RayServices)"
	remedy := "read " + ix.operatorLogs() + " for why it does not create the RayCluster, and kubectl describe rayservice " + name + " -n " + ns
	if w := ix.warningAbout("RayService", ns, name, string(rs.UID)); w != nil {
		why = "the operator reports: " + w.describe(ix.s.Now)
		remedy = w.remedy("rayservice", ns, name)
		ev["operatorWarning"] = w.reason
	}
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RayServiceReady)); c != nil && c.Status != "True" {
		ev["ready"] = c.Reason
		if m := strings.TrimSpace(c.Message); m != "" {
			why += fmt.Sprintf("; its Ready condition is %s (%s: %s)", c.Status, c.Reason, oneLineMessage(m))
		} else {
			why += fmt.Sprintf("; its Ready condition is %s (%s)", c.Status, c.Reason)
		}
	}
	r := v.ref()
	msg := fmt.Sprintf("RayService %s/%s has no RayCluster %s after it was created: %s", ns, name, age(old), why)
	return []Finding{{Rule: RuleRayServiceNoCluster, Severity: severityOf(RuleRayServiceNoCluster), Object: r, RayService: &r,
		Message: msg, Remedy: remedy, Evidence: ev}}
}
