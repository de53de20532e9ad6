package pressure

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Cluster is every API operation a pressure run makes (pkg/kube's Clients in the command, a
// fake in tests). Errors come back explained, one line each.
type Cluster interface {
	GetPodByName(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	// GetRayCluster is read only when no pod matched, to tell a misspelled RayCluster (not
	// found) from one without a pod of the role.
	GetRayCluster(ctx context.Context, namespace, name string) (*rayv1.RayCluster, error)
	ListPodsMatching(ctx context.Context, namespace, selector string) ([]corev1.Pod, error)
	// InjectEphemeralContainer adds ec to pod only while pod is the version read (uid and
	// resourceVersion preconditions); dryRun has the API server judge it and store nothing.
	InjectEphemeralContainer(ctx context.Context, pod *corev1.Pod, ec corev1.EphemeralContainer, dryRun bool) (*corev1.Pod, error)
	// WatchTargetPods watches the pods of labelSelector, or the pod named name when it is "".
	WatchTargetPods(ctx context.Context, namespace, labelSelector, name, resourceVersion string) (watch.Interface, error)
	WatchNodeNamed(ctx context.Context, name string) (watch.Interface, error)
	// ListPodsOnNode lists the pods of node in namespace ("" for every namespace) and returns the
	// list's resourceVersion; WatchPodsOnNode watches them from one. The plan names the node's
	// other pods; the run reports those the kubelet evicts.
	ListPodsOnNode(ctx context.Context, namespace, node string) ([]corev1.Pod, string, error)
	WatchPodsOnNode(ctx context.Context, namespace, node, resourceVersion string) (watch.Interface, error)
	// WatchEvictionEvents watches the kubelet's Evicted Events in namespace ("" for every
	// namespace) from resourceVersion, or from now when it is "".
	WatchEvictionEvents(ctx context.Context, namespace, resourceVersion string) (watch.Interface, error)
	// ContainerLog is the start of a container's log (at most limit bytes): the memory script
	// says there when its allocation was resident (the ramp).
	ContainerLog(ctx context.Context, namespace, pod, container string, limit int64) (string, error)
}

// Planned is what a dry run would inject, and where.
type Planned struct {
	Container corev1.EphemeralContainer
	Pod       *corev1.Pod
	// Warning names the other pods of the node, which the kubelet may evict too ("" for none).
	Warning string
}

// DryRun resolves the pod and plans the container, and has the API server validate it (schema,
// admission, RBAC): nothing is injected. It returns the container, the pod it would join and what
// the plan warns of the node's other pods.
func DryRun(ctx context.Context, c Cluster, s Settings) (Planned, error) {
	pod, spec, err := prepare(ctx, c, s)
	if err != nil {
		return Planned{}, err
	}
	ec := Container(spec)
	if _, err := c.InjectEphemeralContainer(ctx, pod, ec, true); err != nil {
		return Planned{}, err
	}
	return Planned{Container: ec, Pod: pod, Warning: findNeighbours(ctx, c, pod).Warning()}, nil
}

// Run resolves the pod, plans the container, confirms, injects it and, with s.Watch, follows the
// pod and its node until the cluster comes back, the pod is evicted, the container ends, or
// s.Timeout. The outcome fails for a head evicted and not replaced, and for pressure that never
// ran as asked.
func Run(ctx context.Context, c Cluster, s Settings) (*Report, chaos.Outcome, error) {
	if s.Now == nil {
		s.Now = time.Now
	}
	pod, spec, err := prepare(ctx, c, s)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	ec := Container(spec)
	neighbours := findNeighbours(ctx, c, pod)
	var ws *watches
	if s.Watch {
		// Open the watches before injecting, from the versions read: a refusal of the target's
		// (no RBAC to watch pods) then leaves nothing injected, and no event is missed.
		if ws, err = openWatches(ctx, c, s, pod, neighbours); err != nil {
			return nil, chaos.Outcome{}, err
		}
		defer ws.stop()
	}
	warning := neighbours.Warning()
	if err := s.Confirm.Ask(chaos.Confirmation{Action: fmt.Sprintf("add ephemeral container %s to pod %s/%s on node %s (%s, for %s)",
		spec.Name, pod.Namespace, pod.Name, pod.Spec.NodeName, What(spec), spec.Duration), Warning: warning}); err != nil {
		return nil, chaos.Outcome{}, err
	}
	injected, err := c.InjectEphemeralContainer(ctx, pod, ec, false)
	if err != nil {
		return nil, chaos.Outcome{}, err
	}
	if warning != "" {
		// For the record of the run, and for --yes, which skipped the question that showed it.
		follow.Warn(s.Warn, "%s", warning)
	}
	progress := s.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "injected %s into pod %s/%s (target container %s, %s, for %s); its log: kubectl logs -n %s %s -c %s\n",
		ec.Name, pod.Namespace, pod.Name, spec.TargetContainer, What(spec), spec.Duration, pod.Namespace, pod.Name, ec.Name)

	tl := &Timeline{Start: s.Now(), Namespace: injected.Namespace, Pod: injected.Name, UID: injected.UID, Node: injected.Spec.NodeName,
		Container: spec.Name, Head: ray.IsHead(injected), EndedBefore: neighbours.EndedBefore}
	tl.Injected()
	verdict := Verdict{Passed: true, Outcome: OutcomeNotWatched,
		Message: fmt.Sprintf("injected %s into pod %s/%s; the eviction was not watched", ec.Name, pod.Namespace, pod.Name)}
	if s.Watch {
		if err := ws.run(ctx, c, s, tl, spec.Kind == Memory, progress); err != nil {
			return nil, chaos.Outcome{}, err
		}
		verdict = tl.result(s.Timeout)
	}
	r := buildReport(reportInput{Settings: reportSettings(s, spec, injected), Injected: tl.Start,
		Timeline: tl.tl, Verdict: verdict, Ramp: tl.ramp})
	return r, chaos.Outcome{Passed: verdict.Passed}, nil
}

// prepare is the pod and the exact Spec, refusing what must not be touched.
func prepare(ctx context.Context, c Cluster, s Settings) (*corev1.Pod, Spec, error) {
	if err := s.Validate(); err != nil {
		return nil, Spec{}, err
	}
	pod, err := targetPod(ctx, c, s)
	if err != nil {
		return nil, Spec{}, err
	}
	spec, err := Plan(pod, s.Options)
	return pod, spec, err
}

// targetPod is the named pod, or the RayCluster's head or first Running worker found by ONE
// labelled LIST.
func targetPod(ctx context.Context, c Cluster, s Settings) (*corev1.Pod, error) {
	if s.Pod != "" {
		return c.GetPodByName(ctx, s.Namespace, s.Pod)
	}
	selector := fmt.Sprintf("%s=%s,%s=%s", ray.LabelCluster, s.Cluster, ray.LabelNodeType, s.Role)
	pods, err := c.ListPodsMatching(ctx, s.Namespace, selector)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		// A misspelled name gets the not-found line every command gives. Without permission to
		// read RayClusters, the line below still says what was looked for.
		if _, err := c.GetRayCluster(ctx, s.Namespace, s.Cluster); fault.KindOf(err) == fault.NotFound {
			return nil, err
		}
		return nil, fault.Errorf(fault.NotFound, "no %s pod of RayCluster %q in namespace %q; list them with: kubectl get pods -n %s -l %s",
			s.Role, s.Cluster, s.Namespace, s.Namespace, selector)
	}
	// Prefer a Running pod that is not going away; the name order makes the choice repeatable.
	sort.Slice(pods, func(i, j int) bool {
		ri, rj := ray.Running(&pods[i]), ray.Running(&pods[j])
		if ri != rj {
			return ri
		}
		return pods[i].Name < pods[j].Name
	})
	return &pods[0], nil
}

// What says in words what the container puts under pressure and how much.
func What(s Spec) string {
	switch {
	case s.Kind == Memory:
		return "memory: " + s.Basis
	case s.Fill == FillContainer:
		return "disk inside the container: " + s.Basis
	}
	return "node disk: " + s.Basis
}

func reportSettings(s Settings, spec Spec, pod *corev1.Pod) ReportSettings {
	rs := ReportSettings{Experiment: string(spec.Kind), Namespace: pod.Namespace, Target: s.Cluster, Pod: pod.Name,
		Node: pod.Spec.NodeName, Container: spec.Name, TargetContainer: spec.TargetContainer, Image: spec.Image,
		Fill: string(spec.Fill), Bytes: spec.Bytes, Percent: spec.Percent, Basis: spec.Basis,
		DurationMs: spec.Duration.Milliseconds(), WatchEviction: s.Watch}
	if s.Pod != "" {
		rs.Target = "pod/" + s.Pod
	} else {
		rs.Role = s.Role
	}
	if s.Watch {
		rs.TimeoutMs = s.Timeout.Milliseconds()
	}
	return rs
}
