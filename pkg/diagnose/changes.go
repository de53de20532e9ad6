package diagnose

// ChangeType says how a finding changed between two looks at the same RayCluster.
type ChangeType string

const (
	// Found: the finding was there when the watch started.
	Found ChangeType = "FOUND"
	// Appeared: the finding fires now and did not before.
	Appeared ChangeType = "NEW"
	// Cleared: the finding fired before and does not now.
	Cleared ChangeType = "CLEARED"
)

// Change is one finding appearing or clearing (doctor --watch).
type Change struct {
	Type    ChangeType `json:"type"`
	Finding Finding    `json:"finding"`
}

// FindingKey identifies a finding across looks: its rule, its cluster and the object it fired
// on (with its UID, so a replaced pod of the same name is a new finding). The message is not
// part of it: it carries ages ("evicted 9s ago") that change at every look.
func FindingKey(f Finding) string {
	return f.Rule + "|" + f.Cluster.Namespace + "/" + f.Cluster.Name + "|" + f.Object.Kind + "/" + f.Object.Namespace + "/" + f.Object.Name + "/" + f.Object.UID
}

// Changes is what changed from before to after: first what cleared (in before's order), then
// what appeared (in after's order). A finding in both is no change, whatever its message says.
func Changes(before, after []Finding) []Change {
	in := func(fs []Finding) map[string]bool {
		m := make(map[string]bool, len(fs))
		for _, f := range fs {
			m[FindingKey(f)] = true
		}
		return m
	}
	was, is := in(before), in(after)
	var out []Change
	for _, f := range before {
		if !is[FindingKey(f)] {
			out = append(out, Change{Type: Cleared, Finding: f})
		}
	}
	seen := map[string]bool{}
	for _, f := range after {
		k := FindingKey(f)
		if !was[k] && !seen[k] {
			seen[k] = true
			out = append(out, Change{Type: Appeared, Finding: f})
		}
	}
	return out
}
