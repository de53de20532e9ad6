package ray

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// What lets DNS through, rule by rule; anything whose reach the policy alone cannot tell is
// taken to let it through.
func TestEgressOf(t *testing.T) {
	udp, sctp := corev1.ProtocolUDP, corev1.ProtocolSCTP
	port := func(p intstr.IntOrString, proto *corev1.Protocol, end *int32) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Port: &p, Protocol: proto, EndPort: end}
	}
	sameNS := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}}
	otherNS := []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}}
	for _, c := range []struct {
		name    string
		rules   []networkingv1.NetworkPolicyEgressRule
		types   []networkingv1.PolicyType
		ns      string
		blocked bool
	}{
		{"no rule", nil, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, "ml", true},
		{"ingress only", nil, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, "ml", false},
		{"egress rules without policyTypes (a file)", []networkingv1.NetworkPolicyEgressRule{{To: sameNS, Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(443), nil, nil)}}}, nil, "ml", true},
		{"every port, every destination", []networkingv1.NetworkPolicyEgressRule{{}}, nil, "ml", false},
		{"UDP 53 to another namespace", []networkingv1.NetworkPolicyEgressRule{{To: otherNS, Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(53), &udp, nil)}}}, nil, "ml", false},
		{"53 to pods of the policy's namespace", []networkingv1.NetworkPolicyEgressRule{{To: sameNS, Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(53), &udp, nil)}}}, nil, "ml", true},
		{"53 to pods of kube-system, the policy's namespace", []networkingv1.NetworkPolicyEgressRule{{To: sameNS, Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(53), &udp, nil)}}}, nil, "kube-system", false},
		{"a range over 53", []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(50), nil, ptr.To[int32](60))}}}, nil, "ml", false},
		{"a range short of 53", []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(54), nil, ptr.To[int32](60))}}}, nil, "ml", true},
		{"a named port", []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromString("dns"), nil, nil)}}}, nil, "ml", false},
		{"SCTP 53", []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(53), &sctp, nil)}}}, nil, "ml", true},
		{"an IP block", []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "169.254.20.10/32"}}}}}, nil, "ml", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: c.ns},
				Spec: networkingv1.NetworkPolicySpec{PolicyTypes: c.types, Egress: c.rules}}
			e := EgressOf([]networkingv1.NetworkPolicy{p}, c.ns, map[string]string{"a": "b"})
			if e.DNSBlocked() != c.blocked {
				t.Errorf("DNSBlocked = %v, want %v (%+v)", e.DNSBlocked(), c.blocked, e)
			}
			if other := EgressOf([]networkingv1.NetworkPolicy{p}, "elsewhere", nil); len(other.Isolating) != 0 {
				t.Errorf("a policy of another namespace isolated: %+v", other)
			}
		})
	}
	// Policies add up: one that lets DNS through frees the pod from one that does not.
	deny := networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny", Namespace: "ml"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}}
	dns := networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "ml"},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: otherNS}}}}
	if e := EgressOf([]networkingv1.NetworkPolicy{deny, dns}, "ml", map[string]string{"team": "ml"}); e.DNSBlocked() || e.DNSBy != "dns" || len(e.Isolating) != 2 {
		t.Errorf("both: %+v", e)
	}
	if e := EgressOf([]networkingv1.NetworkPolicy{deny, dns}, "ml", map[string]string{"team": "other"}); !e.DNSBlocked() {
		t.Errorf("only the deny selects it: %+v", e)
	}
}
