package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkPolicyConfig is a RayCluster's spec.networkPolicy as KubeRay v1.7.0 declares it
// (apis/ray/v1/raycluster_types.go). The API types this plugin builds with predate it, so
// doctor -f reads it from the document beside the typed RayCluster.
type NetworkPolicyConfig struct {
	// Mode is DenyAll (the CRD's default), DenyAllIngress or DenyAllEgress.
	Mode         string                          `json:"mode,omitempty"`
	Head         *NetworkPolicyRules             `json:"head,omitempty"`
	Worker       *NetworkPolicyRules             `json:"worker,omitempty"`
	WorkerGroups []WorkerGroupNetworkPolicyRules `json:"workerGroups,omitempty"`
}

// NetworkPolicyRules are the rules a user adds to those KubeRay writes.
type NetworkPolicyRules struct {
	IngressRules []networkingv1.NetworkPolicyIngressRule `json:"ingressRules,omitempty"`
	EgressRules  []networkingv1.NetworkPolicyEgressRule  `json:"egressRules,omitempty"`
}

// WorkerGroupNetworkPolicyRules replace Worker's rules for one group.
type WorkerGroupNetworkPolicyRules struct {
	GroupName          string `json:"groupName"`
	NetworkPolicyRules `json:",inline"`
}

// The modes of spec.networkPolicy.
const (
	NetworkPolicyDenyAll        = "DenyAll"
	NetworkPolicyDenyAllIngress = "DenyAllIngress"
	NetworkPolicyDenyAllEgress  = "DenyAllEgress"
)

// NetworkPoliciesKubeRayMakes are the egress halves of the NetworkPolicies KubeRay v1.7.0's
// NetworkPolicy controller makes of rc's spec.networkPolicy np: one for the head
// (<cluster>-head), one per worker group (<cluster>-workers-<group>), each selecting its pods,
// each isolating egress under DenyAll and DenyAllEgress with one base rule to the cluster's own
// pods and the user's rules after it (networkpolicy_controller.go: buildHeadNetworkPolicy,
// buildWorkerGroupNetworkPolicy, workerGroupCustomRules: a group's entry replaces Worker).
// Ingress rules are left out (no rule reads them); its policy type is kept.
func NetworkPoliciesKubeRayMakes(rc *rayv1.RayCluster, np *NetworkPolicyConfig) []networkingv1.NetworkPolicy {
	if np == nil {
		return nil
	}
	mode := np.Mode
	if mode == "" {
		mode = NetworkPolicyDenyAll
	}
	egress := mode == NetworkPolicyDenyAll || mode == NetworkPolicyDenyAllEgress
	ingress := mode == NetworkPolicyDenyAll || mode == NetworkPolicyDenyAllIngress
	policy := func(name, group string, selector map[string]string, custom *NetworkPolicyRules) networkingv1.NetworkPolicy {
		p := networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rc.Namespace, Labels: map[string]string{
				LabelCluster: rc.Name, LabelGroup: group, LabelCreatedBy: ComponentKubeRay,
			}},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: selector}},
		}
		if ingress {
			p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
		}
		if egress {
			p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
			p.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelCluster: rc.Name}},
			}}}}
			if custom != nil {
				p.Spec.Egress = append(p.Spec.Egress, custom.EgressRules...)
			}
		}
		return p
	}
	out := []networkingv1.NetworkPolicy{policy(rc.Name+"-head", "headgroup",
		map[string]string{LabelCluster: rc.Name, LabelNodeType: NodeTypeHead}, np.Head)}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		custom := np.Worker
		for i := range np.WorkerGroups {
			if np.WorkerGroups[i].GroupName == g.GroupName {
				custom = &np.WorkerGroups[i].NetworkPolicyRules
				break
			}
		}
		out = append(out, policy(rc.Name+"-workers-"+g.GroupName, g.GroupName,
			map[string]string{LabelCluster: rc.Name, LabelNodeType: NodeTypeWorker, LabelGroup: g.GroupName}, custom))
	}
	return out
}
