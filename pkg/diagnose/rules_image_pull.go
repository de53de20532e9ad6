package diagnose

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleImagePullFailed: a head's or worker's container, init containers included, waits on an
// image the kubelet cannot pull. No operator version reads container states, and a new pod would
// pull the same image: the fix is the image name, the tag or the pull secret. Until this rule
// came, a head's pull failure was reported as head-crashloop (docs/rules.md, "Rule ID changes").
const RuleImagePullFailed = "image-pull-failed"

// pullReasons are the kubelet's waiting reasons for an image it cannot pull.
var pullReasons = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true}

// pullFailure is the first container of p (init containers first, as they run) waiting on its
// image.
func pullFailure(p *corev1.Pod) (corev1.ContainerStatus, bool) {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && pullReasons[w.Reason] {
				return cs, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// pullEvidence is what every image-pull-failed finding says about the container: the image, the
// reason and the kubelet's message, whose first line names the registry's answer.
func pullEvidence(p *corev1.Pod, cs corev1.ContainerStatus) (map[string]string, string) {
	w := cs.State.Waiting
	ev := map[string]string{"pod": p.Name, "node": p.Spec.NodeName, "container": cs.Name, "image": cs.Image, "reason": w.Reason}
	what := fmt.Sprintf("image %s for container %s (%s)", cs.Image, cs.Name, w.Reason)
	if m := strings.TrimSpace(firstLine(w.Message)); m != "" {
		ev["kubeletMessage"] = m
		what += ": " + m
	}
	return ev, what
}

// headImagePull is a head pod waiting on an image (headPodRules runs it before the crash-loop
// and pending checks: such a pod is Pending, and its fix is neither).
func headImagePull(c *clusterView, p *corev1.Pod) (Finding, bool) {
	cs, ok := pullFailure(p)
	if !ok {
		return Finding{}, false
	}
	ev, what := pullEvidence(p, cs)
	msg := fmt.Sprintf("head pod %s cannot pull %s", p.Name, what)
	remedy := "fix the image name, its tag or the pull secret in headGroupSpec.template; kubectl describe pod " + p.Name + " -n " +
		p.Namespace + " shows the pull events; a new pod would pull the same image, so heal does not act"
	return c.finding(RuleImagePullFailed, state.PodRef(p), msg, remedy, ev), true
}

// workerImagePull reports, per worker group, the workers waiting on an image: one finding for the
// group, named after its first such pod, since every worker of a group pulls the same images.
func workerImagePull(ix *index, c *clusterView) []Finding {
	groups := map[string][]*corev1.Pod{}
	statuses := map[*corev1.Pod]corev1.ContainerStatus{}
	for _, w := range c.workers {
		if !ray.Live(w) {
			continue
		}
		if cs, ok := pullFailure(w); ok {
			g := w.Labels[ray.LabelGroup]
			groups[g] = append(groups[g], w)
			statuses[w] = cs
		}
	}
	var out []Finding
	for _, g := range sortedKeys(groups) {
		pods := groups[g]
		first := pods[0]
		for _, p := range pods {
			if p.Name < first.Name {
				first = p
			}
		}
		names := make([]string, 0, len(pods))
		for _, p := range pods {
			names = append(names, p.Name)
		}
		ev, what := pullEvidence(first, statuses[first])
		ev["group"], ev["workers"], ev["failing"] = g, strings.Join(names, ","), fmt.Sprint(len(pods))
		msg := fmt.Sprintf("%d worker pod(s) of group %s cannot pull images; worker %s cannot pull %s", len(pods), g, first.Name, what)
		remedy := "fix the image name, its tag or the pull secret in the workerGroupSpecs entry " + g + "; kubectl describe pod " +
			first.Name + " -n " + first.Namespace + " shows the pull events; a new pod would pull the same image, so heal does not act"
		out = append(out, c.finding(RuleImagePullFailed, state.PodRef(first), msg, remedy, ev))
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
