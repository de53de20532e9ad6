package ray

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// A RayService upgraded with NewClusterWithIncrementalUpgrade (feature gate
// RayServiceIncrementalUpgrade: alpha and off in v1.5.x and v1.6.x, beta and on by default in
// v1.7.0) sends its traffic through the Gateway API: the operator makes a Gateway <rs>-gateway of
// spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName and an HTTPRoute <rs>-httproute
// weighting the clusters' serve Services (rayservice_controller.go, reconcileGateway,
// reconcileHTTPRoute). It moves no capacity to the new cluster until the Gateway is Accepted and
// Programmed and the HTTPRoute's entry for it Accepted and ResolvedRefs (checkIfNeed-
// TargetCapacityUpdate, utils.IsGatewayReady and IsHTTPRouteReady), and it reads the Gateway at
// every reconcile, before anything else of the RayService: with no Gateway API in the cluster,
// every reconcile fails and no RayCluster is made. None of it has a timeout or an Event.
const (
	GatewayGroup           = "gateway.networking.k8s.io"
	FeatureIncrementalUpgr = "RayServiceIncrementalUpgrade"
)

// firstIncrementalRelease and incrementalOnByDefault: the gate's first release, and the first
// that turns it on by default.
var (
	firstIncrementalRelease = version.MustParseSemantic("v1.5.0")
	incrementalOnByDefault  = version.MustParseSemantic("v1.7.0")
)

// Gateway is what this plugin reads of a gateway.networking.k8s.io/v1 Gateway.
type Gateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		GatewayClassName string `json:"gatewayClassName"`
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
	} `json:"status"`
	// Served is the object as the API server served it, for a bundle to keep whole.
	Served []byte `json:"-"`
}

// HTTPRoute is what this plugin reads of a gateway.networking.k8s.io/v1 HTTPRoute: the verdicts
// of its parents' controllers.
type HTTPRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Parents []RouteParentStatus `json:"parents,omitempty"`
	} `json:"status"`
	// Served is the object as the API server served it, for a bundle to keep whole.
	Served []byte `json:"-"`
}

// RouteParentStatus is one Gateway's controller's verdict on an HTTPRoute.
type RouteParentStatus struct {
	ParentRef struct {
		Name      string  `json:"name"`
		Namespace *string `json:"namespace,omitempty"`
	} `json:"parentRef"`
	ControllerName string             `json:"controllerName"`
	Conditions     []metav1.Condition `json:"conditions,omitempty"`
}

// IncrementalUpgrade says whether rs asks for the incremental upgrade.
func IncrementalUpgrade(rs *rayv1.RayService) bool {
	return rs.Spec.UpgradeStrategy != nil && rs.Spec.UpgradeStrategy.Type != nil &&
		*rs.Spec.UpgradeStrategy.Type == rayv1.RayServiceNewClusterWithIncrementalUpgrade
}

// GatewayName and HTTPRouteName are the objects the operator makes for rs.
func GatewayName(rs *rayv1.RayService) string   { return rs.Name + "-gateway" }
func HTTPRouteName(rs *rayv1.RayService) string { return rs.Name + "-httproute" }

// GatewayClassOf is rs's clusterUpgradeOptions.gatewayClassName, "" when unset.
func GatewayClassOf(rs *rayv1.RayService) string {
	if IncrementalUpgrade(rs) && rs.Spec.UpgradeStrategy.ClusterUpgradeOptions != nil {
		return rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.GatewayClassName
	}
	return ""
}

// IncrementalUpgradeOn says whether o runs incremental upgrades: its --feature-gates, else its
// release's default. known is false when its version cannot be read and no flag sets the gate.
func (o Operator) IncrementalUpgradeOn() (on, known bool) {
	if on, set := o.FeatureGate(FeatureIncrementalUpgr); set {
		v, err := version.ParseSemantic(o.Version)
		return on && (err != nil || !v.LessThan(firstIncrementalRelease)), true
	}
	v, err := version.ParseSemantic(o.Version)
	if err != nil {
		return false, false
	}
	return !v.LessThan(incrementalOnByDefault), true
}

// GatewayReady is the operator's test of the Gateway (utils.IsGatewayReady): Accepted and
// Programmed True. why quotes the conditions that are not, as the Gateway's controller wrote
// them ("Accepted=Unknown (Pending: Waiting for controller)").
func GatewayReady(g *Gateway) (ok bool, why string) {
	return conditionsTrue(g.Status.Conditions, "Accepted", "Programmed")
}

// RouteReady is the operator's test of the HTTPRoute (utils.IsHTTPRouteReady): the entry of the
// Gateway gateway (in namespace ns) Accepted and ResolvedRefs True.
func RouteReady(r *HTTPRoute, gateway, ns string) (ok bool, why string) {
	for _, p := range r.Status.Parents {
		if p.ParentRef.Name == gateway && (p.ParentRef.Namespace == nil || *p.ParentRef.Namespace == ns) {
			return conditionsTrue(p.Conditions, "Accepted", "ResolvedRefs")
		}
	}
	return false, "no controller has written a status for Gateway " + gateway
}

func conditionsTrue(conds []metav1.Condition, types ...string) (bool, string) {
	var not []string
	for _, t := range types {
		var c *metav1.Condition
		for i := range conds {
			if conds[i].Type == t {
				c = &conds[i]
			}
		}
		switch {
		case c == nil:
			not = append(not, t+" unset")
		case c.Status != metav1.ConditionTrue:
			s := fmt.Sprintf("%s=%s", t, c.Status)
			if c.Reason != "" || c.Message != "" {
				s += " (" + strings.TrimRight(strings.TrimSpace(c.Reason+": "+c.Message), ": ") + ")"
			}
			not = append(not, s)
		}
	}
	return len(not) == 0, strings.Join(not, ", ")
}
