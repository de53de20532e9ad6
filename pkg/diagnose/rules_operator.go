package diagnose

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// operatorState is what doctor can say about the operator that should repair a head.
type operatorState int

const (
	opUnknown operatorState = iota // not visible, or a version that cannot be read from the image
	opAbsent                       // none found, or none with a ready replica
	opBuggy                        // older than FixedEvictedHeadVersion: never replaces a Failed head with restartPolicy Always
	opFixed                        // FixedEvictedHeadVersion or newer
)

// operatorVerdict is the state of the operators that are running, and how to name them in a
// message. With several operators the worst one decides: any of them may own the cluster.
func (ix *index) operatorVerdict() (operatorState, string) {
	if !ix.s.CanSee("deployments") {
		return opUnknown, "the KubeRay operator (not visible to you)"
	}
	var ready []ray.Operator
	for _, op := range ix.operators {
		if op.ReadyReplicas > 0 {
			ready = append(ready, op)
		}
	}
	if len(ready) == 0 {
		return opAbsent, "no running KubeRay operator"
	}
	// Worst first: a known-buggy operator, then one of unknown version, then the oldest fixed one.
	var oldest *version.Version
	var oldestName, unknown string
	for _, op := range ready {
		buggy, known := op.HasEvictedHeadBug()
		switch {
		case !known:
			if unknown == "" {
				unknown = fmt.Sprintf("KubeRay %s/%s (version unknown, image %s)", op.Namespace, op.Name, op.Image)
			}
		case buggy:
			return opBuggy, "KubeRay " + op.Version
		default:
			v := version.MustParseSemantic(op.Version)
			if oldest == nil || v.LessThan(oldest) {
				oldest, oldestName = v, op.Version
			}
		}
	}
	if unknown != "" {
		return opUnknown, unknown
	}
	return opFixed, "KubeRay " + oldestName
}

// operatorLogs is the command that shows why the operator did not act.
func (ix *index) operatorLogs() string {
	for _, op := range ix.operators {
		if op.ReadyReplicas > 0 {
			return fmt.Sprintf("kubectl logs -n %s deploy/%s", op.Namespace, op.Name)
		}
	}
	return "kubectl get deploy -A -l app.kubernetes.io/name=kuberay-operator"
}

// operatorRules are cluster-independent: the Cluster of their findings is empty.
func operatorRules(ix *index) []Finding {
	if !ix.s.CanSee("deployments") {
		// Saying "missing" about what we could not see would be a false finding; Blind reports it.
		return nil
	}
	var out []Finding
	ready := 0
	for _, op := range ix.operators {
		obj := state.Ref{Kind: "Deployment", Namespace: op.Namespace, Name: op.Name}
		if op.ReadyReplicas > 0 {
			ready++
		}
		if buggy, known := op.HasEvictedHeadBug(); known && buggy {
			out = append(out, Finding{
				Rule: RuleOperatorOutdated, Severity: severityOf(RuleOperatorOutdated), Object: obj,
				Message: fmt.Sprintf("KubeRay operator %s/%s runs %s, which never replaces a head pod evicted or failed with restartPolicy Always (kuberay #2125, fixed in %s)",
					op.Namespace, op.Name, op.Version, "v"+ray.FixedEvictedHeadVersion.String()),
				Remedy:   fmt.Sprintf("upgrade the KubeRay operator to v%s or newer; until then `kubectl ray heal` replaces such heads", ray.FixedEvictedHeadVersion.String()),
				Evidence: map[string]string{"image": op.Image, "operatorVersion": op.Version},
			})
		}
		if op.Newer() {
			out = append(out, Finding{
				Rule: RuleOperatorNewer, Severity: severityOf(RuleOperatorNewer), Object: obj,
				Message: fmt.Sprintf("KubeRay operator %s/%s runs %s, newer than the releases this doctor was built against (up to v%s): the rules that depend on a release judge it as v%s does, and a finding about what it does may not hold",
					op.Namespace, op.Name, op.Version, ray.NewestKnownRelease.String(), ray.NewestKnownRelease.String()),
				Remedy:   "update this plugin to a build that knows " + op.Version + "; `kubectl ray version` prints the build you run",
				Evidence: map[string]string{"image": op.Image, "operatorVersion": op.Version, "judgedAs": "v" + ray.NewestKnownRelease.String()},
			})
		}
	}
	switch {
	case len(ix.operators) == 0:
		out = append(out, Finding{
			Rule: RuleOperatorMissing, Severity: severityOf(RuleOperatorMissing), Object: state.Ref{Kind: "Deployment", Name: "kuberay-operator"},
			Message:  "no KubeRay operator Deployment found in any namespace you can list: nothing creates or repairs Ray heads",
			Remedy:   "install the KubeRay operator (helm install kuberay-operator kuberay/kuberay-operator), or check that you can list deployments where it runs",
			Evidence: map[string]string{"deployments": fmt.Sprint(len(ix.s.Deployments))},
		})
	case ready == 0:
		op := ix.operators[0]
		out = append(out, Finding{
			Rule: RuleOperatorMissing, Severity: severityOf(RuleOperatorMissing), Object: state.Ref{Kind: "Deployment", Namespace: op.Namespace, Name: op.Name},
			Message:  fmt.Sprintf("KubeRay operator %s/%s has no ready replica: nothing creates or repairs Ray heads", op.Namespace, op.Name),
			Remedy:   fmt.Sprintf("see why its pod is not ready: kubectl describe deploy %s -n %s; kubectl get pods -n %s", op.Name, op.Namespace, op.Namespace),
			Evidence: map[string]string{"image": op.Image, "readyReplicas": "0"},
		})
	}
	return out
}
