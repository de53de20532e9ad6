package doctor

import (
	"context"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// What doctor -f reads of the cluster the documents would be applied to.

// readAdmission sets s.Admission and s.Nodes from the cluster: the ResourceQuotas, LimitRanges
// and Ray objects (the documents may name existing ones) of each namespace the documents'
// RayClusters go to, one LIST per kind and namespace, and every node, trimmed to what placement
// reads. A read refused (a namespaced user
// may not list nodes) is a gap the report names, and the rule that needs it stays silent.
func readAdmission(ctx context.Context, c *kube.Clients, s *diagnose.Snapshot) {
	a := &diagnose.Admission{}
	gaps := map[string]string{}
	seen := map[string]bool{}
	for _, rc := range s.Clusters {
		ns := rc.Namespace
		if seen[ns] {
			continue
		}
		seen[ns] = true
		if q, err := c.ListResourceQuotas(ctx, ns); err != nil {
			gaps["resourcequotas"] = exit.Message(err)
		} else {
			a.Quotas = append(a.Quotas, q...)
		}
		if l, err := c.ListLimitRanges(ctx, ns); err != nil {
			gaps["limitranges"] = exit.Message(err)
		} else {
			a.LimitRanges = append(a.LimitRanges, l...)
		}
		if e, err := c.ListRayObjectsIn(ctx, ns); err != nil {
			gaps[diagnose.RayObjectsGap] = exit.Message(err)
		} else {
			a.Existing = append(a.Existing, e...)
		}
	}
	if n, err := c.ListNodesForFit(ctx); err != nil {
		gaps["nodes"] = exit.Message(err)
	} else {
		s.Nodes = n
	}
	for _, res := range []string{"resourcequotas", "limitranges", "nodes", diagnose.RayObjectsGap} {
		if why, ok := gaps[res]; ok {
			s.Blind = append(s.Blind, diagnose.Gap{Resource: res, Reason: why})
		}
	}
	s.Admission = a
}

// operatorRelease is the KubeRay release that would run the documents: the one version every
// operator found runs, "" offline, with none found, or with operators of several versions.
func operatorRelease(ops *diagnose.Report) string {
	if ops == nil {
		return ""
	}
	release := ""
	for _, op := range ops.Operators {
		if op.Version == "" || (release != "" && op.Version != release) {
			return ""
		}
		release = op.Version
	}
	return release
}
