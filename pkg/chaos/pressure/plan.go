package pressure

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Options is what the user asked for, before a pod is known.
type Options struct {
	Kind Kind
	Fill Fill // disk only; "" means FillNode
	// Amount is --size (disk) or --bytes (memory), a resource.Quantity such as 10Gi; "" when
	// Percent is used.
	Amount  string
	Percent int
	// PercentSet: --percent was given, so a 0 is out of range rather than "no percent".
	PercentSet bool
	// Duration bounds the whole run inside the container, fill included.
	Duration        time.Duration
	Image           string
	TargetContainer string
	Force           bool
	// Suffix makes the container name unique in the pod (a short random string from the command).
	Suffix string
	// Paths zero means DefaultPaths.
	Paths Paths
}

// HeadContainer is the container name KubeRay's samples and docs give the Ray head.
const HeadContainer = "ray-head"

var suffixRE = regexp.MustCompile(`^[a-z0-9]{1,10}$`)

// Validate checks the options alone; it is called before any API request so bad input injects
// nothing.
func (o Options) Validate() error {
	switch o.Kind {
	case Disk:
		if o.Fill != "" && o.Fill != FillNode && o.Fill != FillContainer {
			return invalid("%s must be node or container, not %q", SetFill, o.Fill)
		}
	case Memory:
		if o.Fill != "" {
			return invalid("%s applies to disk-pressure only", SetFill)
		}
	default:
		return invalid("unknown pressure kind %q", o.Kind)
	}
	percent := o.Percent != 0 || o.PercentSet
	switch {
	case o.Amount != "" && percent:
		return invalid("say how much: pass %s (e.g. 10Gi) or %s (1-100), not both", SetAmount, SetPercent)
	case o.Amount == "" && !percent:
		return invalid("say how much: pass %s (e.g. 10Gi) or %s (1-100)", SetAmount, SetPercent)
	}
	if o.Amount != "" {
		n, err := parseBytes(o.Amount)
		if err != nil {
			return err
		}
		if err := o.capBytes(n); err != nil {
			return err
		}
	}
	if percent && (o.Percent < 1 || o.Percent > 100) {
		return invalid("%s %d is out of range: use 1 to 100", SetPercent, o.Percent)
	}
	if o.Duration < time.Second {
		return invalid("%s %s is too short: use at least 1s", SetDuration, o.Duration)
	}
	if o.Duration%time.Second != 0 {
		return invalid("%s %s must be whole seconds (the container's sleep counts seconds)", SetDuration, o.Duration)
	}
	if o.Duration > MaxDuration && !o.Force {
		return invalid("%s %s is longer than %s: pass %s to hold pressure that long", SetDuration, o.Duration, MaxDuration, SetForce)
	}
	if !suffixRE.MatchString(o.Suffix) {
		return invalid("internal: container name suffix %q is not 1-10 lowercase letters or digits", o.Suffix)
	}
	return nil
}

func parseBytes(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, invalid("%s %q is not a quantity: use e.g. 512Mi, 10Gi or 2G", SetAmount, s)
	}
	n, ok := q.AsInt64()
	if !ok || n <= 0 {
		return 0, invalid("%s %q must be a positive whole number of bytes, e.g. 10Gi", SetAmount, s)
	}
	return n, nil
}

func (o Options) capBytes(n int64) error {
	limit := MaxDiskBytes
	if o.Kind == Memory {
		limit = MaxMemoryBytes
	}
	if n > limit && !o.Force {
		return invalid("%s %s is above the %s cap: pass %s to go beyond it",
			SetAmount, resource.NewQuantity(n, resource.BinarySI), resource.NewQuantity(limit, resource.BinarySI), SetForce)
	}
	return nil
}

// Plan resolves the options against the target pod: it refuses pods that must not be touched and
// returns the exact Spec to inject.
func Plan(pod *corev1.Pod, o Options) (Spec, error) {
	if err := o.Validate(); err != nil {
		return Spec{}, err
	}
	ref := pod.Namespace + "/" + pod.Name
	if pod.Namespace == "kube-system" {
		return Spec{}, invalid("refusing to put pressure on pod %s: kube-system is never a chaos target", ref)
	}
	if !ray.IsRayPod(pod) {
		return Spec{}, invalid("refusing pod %s: it is not a Ray pod (no label %s); chaos targets Ray pods only", ref, ray.RayPodSelector)
	}
	if pod.DeletionTimestamp != nil {
		return Spec{}, invalid("pod %s is being deleted; pick a pod that is Running", ref)
	}
	if pod.Status.Phase != corev1.PodRunning {
		return Spec{}, invalid("pod %s is %s, not Running; an ephemeral container can only join a running pod", ref, phaseOf(pod))
	}
	target, err := targetContainer(pod, o.TargetContainer)
	if err != nil {
		return Spec{}, err
	}
	if !containerRunning(pod, target.Name) {
		return Spec{}, invalid("container %s in pod %s is not running; the ephemeral container must join a running one (pick another with %s)", target.Name, ref, SetTargetContainer)
	}
	if name, running := runningOurs(pod); running && !o.Force {
		return Spec{}, invalid("pod %s already runs %s from an earlier chaos run; wait for it to end, or pass %s", ref, name, SetForce)
	}

	s := Spec{
		Kind: o.Kind, Fill: o.Fill, Duration: o.Duration, Force: o.Force, Image: o.Image,
		TargetContainer: target.Name, Name: NamePrefix + string(o.Kind) + "-" + o.Suffix, Paths: o.Paths,
	}
	if s.Kind == Disk && s.Fill == "" {
		s.Fill = FillNode
	}
	if s.Image == "" {
		s.Image = DefaultImage
	}
	if s.Paths == (Paths{}) {
		s.Paths = DefaultPaths
	}
	if err := s.amount(o, target); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// amount fixes Bytes, or leaves Percent for the script to apply at run time.
func (s *Spec) amount(o Options, target *corev1.Container) error {
	if o.Amount != "" {
		n, err := parseBytes(o.Amount)
		if err != nil {
			return err
		}
		s.Bytes, s.Basis = n, o.Amount
		return nil
	}
	// A percent of the target's own limit is what crosses that limit; without one, the only
	// meaningful base is what is left on the node, which only the container itself can measure.
	var limitName corev1.ResourceName
	switch {
	case s.Kind == Memory:
		limitName = corev1.ResourceMemory
	case s.Fill == FillContainer:
		limitName = corev1.ResourceEphemeralStorage
	}
	if q, ok := target.Resources.Limits[limitName]; ok && limitName != "" && !q.IsZero() {
		s.Bytes = q.Value() * int64(o.Percent) / 100
		s.Basis = fmt.Sprintf("%d%% of container %s's %s limit %s", o.Percent, target.Name, limitName, q.String())
		return o.capBytes(s.Bytes)
	}
	if o.Percent > MaxRuntimePercent && !o.Force {
		return invalid("%s %d of the node's free %s leaves too little for other pods: use at most %d, or pass %s",
			SetPercent, o.Percent, map[Kind]string{Disk: "disk", Memory: "memory"}[s.Kind], MaxRuntimePercent, SetForce)
	}
	s.Percent = o.Percent
	switch {
	case s.Kind == Memory:
		s.Basis = fmt.Sprintf("%d%% of the node's MemAvailable, read when the container starts (container %s has no memory limit)", o.Percent, target.Name)
	case s.Fill == FillContainer:
		s.Basis = fmt.Sprintf("%d%% of the free space under container %s's %s, measured when the container starts (it has no ephemeral-storage limit)", o.Percent, target.Name, s.Paths.TargetDir)
	default:
		s.Basis = fmt.Sprintf("%d%% of the free space of the node's container filesystem, measured when the container starts", o.Percent)
	}
	return nil
}

// targetContainer is --target-container, else ray-head on a head pod that has it, else the first
// container (the one KubeRay treats as the Ray container).
func targetContainer(pod *corev1.Pod, name string) (*corev1.Container, error) {
	if name == "" && ray.IsHead(pod) {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == HeadContainer {
				return &pod.Spec.Containers[i], nil
			}
		}
	}
	if name == "" && len(pod.Spec.Containers) > 0 {
		return &pod.Spec.Containers[0], nil
	}
	names := make([]string, 0, len(pod.Spec.Containers))
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], nil
		}
		names = append(names, pod.Spec.Containers[i].Name)
	}
	return nil, fault.Errorf(fault.NotFound, "container %q not found in pod %s/%s; it has: %s (pass one with %s)",
		name, pod.Namespace, pod.Name, strings.Join(names, ", "), SetTargetContainer)
}

func containerRunning(pod *corev1.Pod, name string) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.State.Running != nil
		}
	}
	return false
}

// runningOurs reports an ephemeral container of this tool that is still running: a second one
// would stack pressure the user did not ask for.
func runningOurs(pod *corev1.Pod) (string, bool) {
	for _, cs := range pod.Status.EphemeralContainerStatuses {
		if strings.HasPrefix(cs.Name, NamePrefix) && cs.State.Running != nil {
			return cs.Name, true
		}
	}
	return "", false
}

func phaseOf(pod *corev1.Pod) string {
	if pod.Status.Phase == "" {
		return "in no phase yet"
	}
	if pod.Status.Reason != "" {
		return fmt.Sprintf("%s (%s)", pod.Status.Phase, pod.Status.Reason)
	}
	return string(pod.Status.Phase)
}
