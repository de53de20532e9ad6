package ray

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// A Ray worker finds its head by the head Service's DNS name (KubeRay's wait-gcs-ready and the
// worker's ray start --address both use it), so a worker whose egress a NetworkPolicy isolates
// without letting DNS through waits for ever. KubeRay v1.7.0's spec.networkPolicy (feature gate
// RayClusterNetworkPolicy) makes exactly that by default: mode DenyAll, egress to the cluster's
// own pods only, DNS left to the user (networkpolicy_controller.go, buildBaseEgressRules, and
// its network-policy-deny-all sample); a namespace's own default-deny egress policy does the same.

// DNSPort is the port a pod's resolver asks.
const DNSPort = 53

// Egress is what the NetworkPolicies selecting one pod say of its egress.
type Egress struct {
	// Isolating are the names of the policies that isolate the pod's egress, sorted: with one or
	// more, the pod may send only what one of their egress rules allows.
	Isolating []string
	// DNSBy is the first of them (by name) with an egress rule that may let DNS through, "" when
	// none does.
	DNSBy string
}

// DNSBlocked says whether the pod's egress is isolated with no rule that may let DNS through.
func (e Egress) DNSBlocked() bool { return len(e.Isolating) > 0 && e.DNSBy == "" }

// EgressOf judges the egress of a pod of namespace with podLabels under policies (those of other
// namespaces are skipped). Where a rule's reach cannot be known from the policy alone (a named
// port, an IP block, another namespace), it is taken to let DNS through: the rule that reads
// this must not report a cluster that works.
func EgressOf(policies []networkingv1.NetworkPolicy, namespace string, podLabels map[string]string) Egress {
	var e Egress
	set := labels.Set(podLabels)
	sorted := make([]*networkingv1.NetworkPolicy, 0, len(policies))
	for i := range policies {
		sorted = append(sorted, &policies[i])
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		if p.Namespace != namespace || p.DeletionTimestamp != nil || !IsolatesEgress(p) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil || !sel.Matches(set) {
			continue
		}
		e.Isolating = append(e.Isolating, p.Name)
		if e.DNSBy == "" && slices.ContainsFunc(p.Spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool {
			return mayReachDNS(r, p.Namespace)
		}) {
			e.DNSBy = p.Name
		}
	}
	return e
}

// IsolatesEgress says whether p isolates the egress of the pods it selects. The API server
// defaults an empty policyTypes to Ingress, plus Egress when the policy has egress rules; a policy
// read from a file may not have been defaulted.
func IsolatesEgress(p *networkingv1.NetworkPolicy) bool {
	if len(p.Spec.PolicyTypes) == 0 {
		return len(p.Spec.Egress) > 0
	}
	return slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
}

// mayReachDNS says whether r may let a pod of namespace ask a DNS server on port 53.
func mayReachDNS(r networkingv1.NetworkPolicyEgressRule, namespace string) bool {
	return portsAllowDNS(r.Ports) && peersMayServeDNS(r.To, namespace)
}

// portsAllowDNS: no ports is every port; a port without a number is every port of its
// protocol; a named port is resolved on the destination pod (CoreDNS names its own "dns") and
// is not judged. TCP alone is taken as enough, as a resolver may use it.
func portsAllowDNS(ports []networkingv1.NetworkPolicyPort) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolUDP && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if p.Port == nil || p.Port.Type != 0 {
			return true
		}
		v := p.Port.IntVal
		if v == DNSPort || (p.EndPort != nil && v <= DNSPort && DNSPort <= *p.EndPort) {
			return true
		}
	}
	return false
}

// peersMayServeDNS: no peer is every destination. A peer naming only pods (no namespace
// selector, no IP block) is in the policy's own namespace, where no cluster runs its DNS server
// but kube-system; a namespace selector or an IP block may reach it and is not judged.
func peersMayServeDNS(peers []networkingv1.NetworkPolicyPeer, namespace string) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		if p.IPBlock != nil || p.NamespaceSelector != nil || namespace == "kube-system" {
			return true
		}
	}
	return false
}

// MadeByKubeRay says whether p is one KubeRay made from a RayCluster's spec.networkPolicy
// (named <cluster>-head or <cluster>-workers-<group>, labelled with the cluster).
func MadeByKubeRay(p *networkingv1.NetworkPolicy) bool {
	return p.Labels[LabelCreatedBy] == ComponentKubeRay && p.Labels[LabelCluster] != ""
}
