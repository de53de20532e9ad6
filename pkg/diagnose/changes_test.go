package diagnose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func TestChanges(t *testing.T) {
	f := func(rule, pod, uid, msg string) Finding {
		return Finding{Rule: rule, Severity: SeverityError, Cluster: state.Ref{Kind: "RayCluster", Namespace: "ml", Name: "demo"},
			Object: state.Ref{Kind: "Pod", Namespace: "ml", Name: pod, UID: uid}, Message: msg}
	}
	evicted := f(RuleHeadEvicted, "demo-head-a", "u1", "head pod demo-head-a was evicted 9s ago")
	evictedLater := f(RuleHeadEvicted, "demo-head-a", "u1", "head pod demo-head-a was evicted 39s ago")
	stale := f(RuleStatusStale, "demo-head-a", "u1", "status is stale")
	replaced := f(RuleHeadEvicted, "demo-head-a", "u2", "head pod demo-head-a was evicted 1s ago")
	show := func(cs []Change) string {
		var b strings.Builder
		for _, c := range cs {
			fmt.Fprintf(&b, "%s %s %s: %s\n", c.Type, c.Finding.Rule, c.Finding.Object.UID, c.Finding.Message)
		}
		return b.String()
	}
	for _, c := range []struct {
		name          string
		before, after []Finding
		want          string
	}{
		{"nothing", nil, nil, ""},
		{"appears", nil, []Finding{evicted, stale}, "NEW head-evicted u1: head pod demo-head-a was evicted 9s ago\nNEW status-stale u1: status is stale\n"},
		{"an age is no change", []Finding{evicted}, []Finding{evictedLater}, ""},
		{"clears", []Finding{evicted, stale}, nil, "CLEARED head-evicted u1: head pod demo-head-a was evicted 9s ago\nCLEARED status-stale u1: status is stale\n"},
		{"cleared first, then new", []Finding{evicted, stale}, []Finding{stale, replaced},
			"CLEARED head-evicted u1: head pod demo-head-a was evicted 9s ago\nNEW head-evicted u2: head pod demo-head-a was evicted 1s ago\n"},
		{"a duplicate appears once", nil, []Finding{stale, stale}, "NEW status-stale u1: status is stale\n"},
	} {
		if got := show(Changes(c.before, c.after)); got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
