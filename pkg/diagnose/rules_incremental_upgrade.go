package diagnose

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// RuleIncrementalUpgradeBlocked is an invariant between a RayService's upgrade strategy and the
// Gateway API objects it depends on. Under NewClusterWithIncrementalUpgrade (feature gate
// RayServiceIncrementalUpgrade, on by default from KubeRay v1.7.0) the operator reads the
// RayService's Gateway at every reconcile before anything else, so a cluster without the Gateway
// API's CRDs gets no RayCluster and no upgrade, with no Event and no status; and during an upgrade
// it raises the new cluster's Serve capacity only once the Gateway is Accepted and Programmed and
// the HTTPRoute's entry for it Accepted and ResolvedRefs (rayservice_controller.go,
// reconcileGateway, checkIfNeedTargetCapacityUpdate): a Gateway no controller programs holds the
// upgrade at 0% for good. Nothing times out.
const RuleIncrementalUpgradeBlocked = "incremental-upgrade-blocked"

// incrementalUpgradeBlocked reports a RayService upgrading incrementally under an operator that
// runs such upgrades, when the cluster has no Gateway API, or when an upgrade (or its rollback)
// under way for longer than OperatorGrace waits on a Gateway or HTTPRoute that is not ready.
func incrementalUpgradeBlocked(ix *index, v *serviceView) []Finding {
	rs := v.rs
	if !ray.IncrementalUpgrade(rs) || rs.DeletionTimestamp != nil || ray.RayServiceSuspended(rs) || !ix.incrementalUpgradeOn() {
		return nil
	}
	class := ray.GatewayClassOf(rs)
	what := fmt.Sprintf("RayService %s/%s upgrades with NewClusterWithIncrementalUpgrade (gatewayClassName %q)", rs.Namespace, rs.Name, class)
	r := v.ref()
	finding := func(msg, remedy string, ev map[string]string) []Finding {
		ev["gatewayClass"] = class
		return []Finding{{Rule: RuleIncrementalUpgradeBlocked, Severity: severityOf(RuleIncrementalUpgradeBlocked), Object: r, RayService: &r,
			Message: msg, Remedy: remedy, Evidence: ev}}
	}
	if ix.s.NoGatewayAPI {
		held := "it gets no RayCluster"
		if len(v.clusters) > 0 {
			held = "nothing of it is reconciled any more, no upgrade included"
		}
		return finding(what+", and the cluster has no Gateway API (no gateways."+ray.GatewayGroup+"): the operator reads the RayService's Gateway at every reconcile and fails before anything else, so "+held+"; no Event or status says so",
			"install the Gateway API's CRDs (standard channel; the operator then goes on by itself) and a gateway controller for GatewayClass "+class+", or set spec.upgradeStrategy.type to NewCluster (kubectl edit rayservice "+rs.Name+" -n "+rs.Namespace+")",
			map[string]string{"gatewayAPI": "absent"})
	}
	up := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.UpgradeInProgress))
	pending := rs.Status.PendingServiceStatus.RayClusterName
	if up == nil || up.Status != "True" || pending == "" || ix.s.Now.Sub(up.LastTransitionTime.Time) <= ix.opts.OperatorGrace {
		return nil
	}
	if !ix.s.CanSee("gateways") || !ix.s.CanSee("httproutes") {
		return nil
	}
	gwName, routeName := ray.GatewayName(rs), ray.HTTPRouteName(rs)
	var why string
	switch gw := ix.gateway(rs.Namespace, gwName); {
	case gw == nil:
		why = "its Gateway " + gwName + " does not exist"
		if w := ix.warningAbout("RayService", rs.Namespace, rs.Name, string(rs.UID)); w != nil {
			why += "; the operator reports: " + w.describe(ix.s.Now)
		}
	default:
		if ok, not := ray.GatewayReady(gw); !ok {
			why = "its Gateway " + gwName + " is not ready: " + not
		} else if route := ix.httpRoute(rs.Namespace, routeName); route == nil {
			why = "its HTTPRoute " + routeName + " does not exist"
		} else if ok, not := ray.RouteReady(route, gwName, rs.Namespace); !ok {
			why = "its HTTPRoute " + routeName + " is not ready: " + not
		}
	}
	if why == "" {
		return nil
	}
	act, pend := rs.Status.ActiveServiceStatus, rs.Status.PendingServiceStatus
	doing := "is upgrading from RayCluster " + orNone(act.RayClusterName) + " to " + pending
	if meta.IsStatusConditionTrue(rs.Status.Conditions, string(rayv1.RollbackInProgress)) {
		doing = "is rolling back from RayCluster " + pending + " to " + orNone(act.RayClusterName)
	}
	ev := map[string]string{"pendingCluster": pending, "activeCluster": act.RayClusterName, "since": age(ix.s.Now.Sub(up.LastTransitionTime.Time)),
		"pendingTargetCapacity": percent(pend.TargetCapacity), "pendingTraffic": percent(pend.TrafficRoutedPercent),
		"gateway": gwName, "httpRoute": routeName}
	msg := fmt.Sprintf("RayService %s/%s (NewClusterWithIncrementalUpgrade, gatewayClassName %q) %s for %s, and the operator moves no capacity: %s "+
		"(new cluster: target capacity %s, traffic %s; old: %s, %s). It raises capacity only once the Gateway is Accepted and Programmed and the HTTPRoute's entry for it Accepted and ResolvedRefs, and never times out",
		rs.Namespace, rs.Name, class, doing, ev["since"], why, ev["pendingTargetCapacity"], ev["pendingTraffic"], percent(act.TargetCapacity), percent(act.TrafficRoutedPercent))
	remedy := fmt.Sprintf("have GatewayClass %s's controller accept the Gateway and its HTTPRoute (kubectl get gatewayclass %s; kubectl describe gateway %s -n %s; kubectl describe httproute %s -n %s: a class no controller serves leaves the Gateway Pending), or put spec.rayClusterConfig back as it was to roll back to RayCluster %s",
		class, class, gwName, rs.Namespace, routeName, rs.Namespace, orNone(act.RayClusterName))
	return finding(msg, remedy, ev)
}

// incrementalUpgradeOn says whether an operator found runs incremental upgrades, or none could
// be told (no operator seen, or its version unknown): the rule then assumes one does.
func (ix *index) incrementalUpgradeOn() bool {
	if len(ix.operators) == 0 {
		return true
	}
	for _, op := range ix.operators {
		if on, known := op.IncrementalUpgradeOn(); on || !known {
			return true
		}
	}
	return false
}

func (ix *index) gateway(ns, name string) *ray.Gateway {
	for i := range ix.s.Gateways {
		if g := &ix.s.Gateways[i]; g.Namespace == ns && g.Name == name {
			return g
		}
	}
	return nil
}

func (ix *index) httpRoute(ns, name string) *ray.HTTPRoute {
	for i := range ix.s.HTTPRoutes {
		if r := &ix.s.HTTPRoutes[i]; r.Namespace == ns && r.Name == name {
			return r
		}
	}
	return nil
}

// percent is a status percentage as written ("0%"), "unset" when the operator wrote none.
func percent(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprintf("%d%%", ptr.Deref(p, 0))
}
