package diagnose

import (
	"fmt"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleServeNoEndpoints: a RayService's serve Service sends traffic nowhere, or to a cluster that
// is not the active one, while the RayService may report that it is running (kuberay #5148).
const RuleServeNoEndpoints = "serve-no-endpoints"

// annotationLastChange is what the EndpointSlice controller writes on a slice: the time of the
// pod or Service change its content reflects.
const annotationLastChange = "endpoints.kubernetes.io/last-change-trigger-time"

// serveEndpoints is what the EndpointSlices of one Service say: how many endpoints are ready, and
// when their content last changed.
type serveEndpoints struct {
	ready   int
	changed time.Time
}

// indexServeEndpoints sums the snapshot's EndpointSlices per Service (label
// kubernetes.io/service-name), once for all rules.
func indexServeEndpoints(slices []discoveryv1.EndpointSlice) map[string]*serveEndpoints {
	out := make(map[string]*serveEndpoints, len(slices))
	for i := range slices {
		sl := &slices[i]
		svc := sl.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		e := out[key(sl.Namespace, svc)]
		if e == nil {
			e = &serveEndpoints{}
			out[key(sl.Namespace, svc)] = e
		}
		for _, ep := range sl.Endpoints {
			// An unset ready condition counts as ready, as kube-proxy counts it.
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				e.ready++
			}
		}
		changed := sl.CreationTimestamp.Time
		if t, err := time.Parse(time.RFC3339Nano, sl.Annotations[annotationLastChange]); err == nil && t.After(changed) {
			changed = t
		}
		if changed.After(e.changed) {
			e.changed = changed
		}
	}
	return out
}

// serveNoEndpoints runs on the active cluster of a RayService. It fires when the serve Service
// selects a cluster that is neither the active nor the pending one, or when the Service has no
// ready endpoint while the RayService reports that it serves. Nothing is reported within
// ServeEndpointsGrace of the Service's creation, of the last change of its endpoints, or of the
// RayService's last Ready or UpgradeInProgress transition: traffic switches take a reconcile or two.
func serveNoEndpoints(ix *index, c *clusterView) []Finding {
	rs := c.service
	if rs == nil || rs.Status.ActiveServiceStatus.RayClusterName != c.rc.Name || !ix.s.CanSee("services") || !ix.s.CanSee("endpointslices") {
		return nil
	}
	svcName := ray.ServeServiceName(rs.Name)
	svc := ix.services[key(rs.Namespace, svcName)]
	if svc == nil {
		return nil
	}
	eps := ix.serveEndpoints[key(rs.Namespace, svcName)]
	if eps == nil {
		eps = &serveEndpoints{}
	}
	settled := svc.CreationTimestamp.Time
	for _, t := range []time.Time{eps.changed, conditionChanged(rs, rayv1.RayServiceReady), conditionChanged(rs, rayv1.UpgradeInProgress)} {
		if t.After(settled) {
			settled = t
		}
	}
	if ix.s.Now.Sub(settled) < ix.opts.ServeEndpointsGrace {
		return nil
	}
	selected := svc.Spec.Selector[ray.LabelCluster]
	active, pending := c.rc.Name, rs.Status.PendingServiceStatus.RayClusterName
	claims := servingClaims(rs)
	ev := map[string]string{
		"service": svcName, "readyEndpoints": fmt.Sprint(eps.ready), "selectedCluster": orNone(selected),
		"activeCluster": active, "rayServiceStatus": orNone(strings.Join(claims, ",")),
	}
	svcRef := state.Ref{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}
	what := "RayService " + key(rs.Namespace, rs.Name)
	if len(claims) > 0 {
		what += " reports " + strings.Join(claims, ", ")
	}
	switch {
	case selected != "" && selected != active && selected != pending:
		msg := fmt.Sprintf("serve Service %s selects RayCluster %s, not the active cluster %s, and has %d ready endpoints; %s (kuberay #5148)",
			svcName, selected, active, eps.ready, what)
		return []Finding{c.finding(RuleServeNoEndpoints, svcRef, msg,
			"the RayService controller sets the selector when it reconciles: read "+ix.operatorLogs()+
				"; clients that can, send traffic through the Gateway of an incremental upgrade meanwhile", ev)}
	case eps.ready == 0 && len(claims) > 0:
		msg := fmt.Sprintf("serve Service %s has no ready endpoint while %s: requests to it are refused (kuberay #5148)", svcName, what)
		return []Finding{c.finding(RuleServeNoEndpoints, svcRef, msg,
			fmt.Sprintf("see which pods it selects and why none is Ready: kubectl get pods -n %s -l %s; kubectl describe endpointslices -n %s -l %s=%s",
				svc.Namespace, selectorString(svc.Spec.Selector), svc.Namespace, discoveryv1.LabelServiceName, svcName), ev)}
	}
	return nil
}

// servingClaims are what the RayService's status says about serving: the Ready condition
// (KubeRay v1.3+) and serviceStatus Running (every release).
func servingClaims(rs *rayv1.RayService) []string {
	var out []string
	if meta.IsStatusConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceReady)) {
		out = append(out, "Ready=True")
	}
	if rs.Status.ServiceStatus == rayv1.Running {
		out = append(out, "serviceStatus=Running")
	}
	return out
}

func conditionChanged(rs *rayv1.RayService, t rayv1.RayServiceConditionType) time.Time {
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(t)); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func selectorString(sel map[string]string) string {
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: sel})
}
