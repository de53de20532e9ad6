package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// doctor -f reads KubeRay v1.7.0's spec.networkPolicy beside the typed RayCluster (whose types
// predate it), adds the policies the operator would make of it, and judges each worker group's
// pods against them and the NetworkPolicy documents: the group without DNS is reported at its
// spec.networkPolicy, the group whose own entry lets DNS through is not, and a user's policy is
// reported at its own document.
func TestNetworkPolicyDocuments(t *testing.T) {
	file := "testdata/networkpolicies/deny-all-without-dns.yaml"
	s := read(t, Input{Paths: []string{file}})
	if s.SkippedCount() != 0 || len(s.Documents) != 2 {
		t.Fatalf("documents %d, skipped %v", len(s.Documents), s.Skipped)
	}
	snap := s.Snapshot("ml", time.Unix(0, 0))
	var names []string
	for _, p := range snap.NetworkPolicies {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	if strings.Join(names, " ") != "ml/np-head ml/np-workers-small ml/np-workers-big ml/team-egress" {
		t.Fatalf("policies %v", names)
	}
	r := diagnose.Diagnose(snap, diagnose.Options{SpecOnly: true})
	s.Locate(&r)
	var got []string
	for _, f := range r.Findings {
		if f.Rule != diagnose.RuleNetworkPolicyBlocksDNS {
			continue
		}
		got = append(got, f.Cluster.Name+" "+f.Evidence["group"]+" "+f.Object.Kind+"/"+f.Object.Name+" "+f.Field)
		if f.Source == nil || f.Source.File != file {
			t.Errorf("%s: source %+v", f.Cluster.Name, f.Source)
		} else if want := map[string]int{"np": 8, "other": 55}[f.Cluster.Name]; f.Source.Line != want {
			t.Errorf("%s: line %d, want %d", f.Cluster.Name, f.Source.Line, want)
		}
	}
	if strings.Join(got, "; ") != "np small RayCluster/np spec.networkPolicy; other w NetworkPolicy/team-egress " {
		t.Errorf("findings %q", got)
	}
}
