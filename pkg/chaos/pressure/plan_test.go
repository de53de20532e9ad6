package pressure

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

func TestPlanRefuses(t *testing.T) {
	ok := Options{Kind: Disk, Amount: "1Gi", Duration: time.Minute, Suffix: "abcde"}
	cases := []struct {
		name string
		pod  func(*corev1.Pod)
		opts func(*Options)
		code fault.Kind
		want string
	}{
		{"kube-system", func(p *corev1.Pod) { p.Namespace = "kube-system" }, nil, fault.Invalid,
			"refusing to put pressure on pod kube-system/raycluster-demo-head-x7k2p: kube-system is never a chaos target"},
		{"not a Ray pod", func(p *corev1.Pod) { delete(p.Labels, "ray.io/is-ray-node") }, nil, fault.Invalid,
			"refusing pod ml/raycluster-demo-head-x7k2p: it is not a Ray pod (no label ray.io/is-ray-node=yes); chaos targets Ray pods only"},
		{"evicted", func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted" }, nil, fault.Invalid,
			"pod ml/raycluster-demo-head-x7k2p is Failed (Evicted), not Running; an ephemeral container can only join a running pod"},
		{"no such container", nil, func(o *Options) { o.TargetContainer = "ray-worker" }, fault.NotFound,
			`container "ray-worker" not found in pod ml/raycluster-demo-head-x7k2p; it has: autoscaler, ray-head (pass one with --target-container)`},
		{"container not running", func(p *corev1.Pod) { p.Status.ContainerStatuses[1].State = corev1.ContainerState{} }, nil, fault.Invalid,
			"container ray-head in pod ml/raycluster-demo-head-x7k2p is not running; the ephemeral container must join a running one (pick another with --target-container)"},
		{"ours still running", func(p *corev1.Pod) {
			p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "kubectl-ray-disk-pressure-zzzzz", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		}, nil, fault.Invalid, "pod ml/raycluster-demo-head-x7k2p already runs kubectl-ray-disk-pressure-zzzzz from an earlier chaos run; wait for it to end, or pass --force"},
		{"malformed size", nil, func(o *Options) { o.Amount = "ten gigs" }, fault.Invalid, `--size "ten gigs" is not a quantity: use e.g. 512Mi, 10Gi or 2G`},
		{"negative size", nil, func(o *Options) { o.Amount = "-1Gi" }, fault.Invalid, `--size "-1Gi" must be a positive whole number of bytes, e.g. 10Gi`},
		{"size over cap", nil, func(o *Options) { o.Amount = "101Gi" }, fault.Invalid, "--size 101Gi is above the 100Gi cap: pass --force to go beyond it"},
		{"memory over cap", nil, func(o *Options) { o.Kind, o.Amount = Memory, "65Gi" }, fault.Invalid, "--bytes 65Gi is above the 64Gi cap: pass --force to go beyond it"},
		{"size and percent", nil, func(o *Options) { o.Percent = 50 }, fault.Invalid, "say how much: pass --size (e.g. 10Gi) or --percent (1-100), not both"},
		{"neither", nil, func(o *Options) { o.Amount = "" }, fault.Invalid, "say how much: pass --size (e.g. 10Gi) or --percent (1-100)"},
		{"percent zero given", nil, func(o *Options) { o.Amount, o.PercentSet = "", true }, fault.Invalid, "--percent 0 is out of range: use 1 to 100"},
		{"size and percent zero", nil, func(o *Options) { o.PercentSet = true }, fault.Invalid, "say how much: pass --size (e.g. 10Gi) or --percent (1-100), not both"},
		{"percent out of range", nil, func(o *Options) { o.Amount, o.Percent = "", 101 }, fault.Invalid, "--percent 101 is out of range: use 1 to 100"},
		{"percent of node free over cap", nil, func(o *Options) { o.Amount, o.Percent = "", 96 }, fault.Invalid,
			"--percent 96 of the node's free disk leaves too little for other pods: use at most 95, or pass --force"},
		{"fill unknown", nil, func(o *Options) { o.Fill = "everything" }, fault.Invalid, `--fill must be node or container, not "everything"`},
		{"short duration", nil, func(o *Options) { o.Duration = 500 * time.Millisecond }, fault.Invalid, "--duration 500ms is too short: use at least 1s"},
		{"long duration", nil, func(o *Options) { o.Duration = 2 * time.Hour }, fault.Invalid, "--duration 2h0m0s is longer than 1h0m0s: pass --force to hold pressure that long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod, o := headPod(), ok
			if c.pod != nil {
				c.pod(pod)
			}
			if c.opts != nil {
				c.opts(&o)
			}
			_, err := Plan(pod, o)
			if got := asFlags(err, o.Kind); got != c.want || fault.KindOf(err) != c.code {
				t.Errorf("got %s (kind %d)\nwant %s (kind %d)", got, fault.KindOf(err), c.want, c.code)
			}
		})
	}
}

func TestPlanForceLiftsCaps(t *testing.T) {
	o := Options{Kind: Disk, Percent: 100, Duration: 2 * time.Hour, Suffix: "abcde", Force: true}
	s, err := Plan(headPod(), o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Percent != 100 || s.Bytes != 0 || s.Fill != FillNode {
		t.Errorf("got %+v", s)
	}
}

func TestPlanTargetContainer(t *testing.T) {
	o := Options{Kind: Memory, Amount: "1Gi", Duration: time.Minute, Suffix: "abcde"}
	worker := headPod()
	worker.Labels["ray.io/node-type"] = "worker"
	cases := []struct {
		name string
		pod  *corev1.Pod
		flag string
		want string
	}{
		{"head prefers ray-head", headPod(), "", "ray-head"},
		{"worker takes the first container", worker, "", "autoscaler"},
		{"flag wins", headPod(), "autoscaler", "autoscaler"},
	}
	for _, c := range cases {
		o.TargetContainer = c.flag
		s, err := Plan(c.pod, o)
		if err != nil || s.TargetContainer != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, s.TargetContainer, err, c.want)
		}
	}
}

// asFlags shows err as the commands do: each setting as its flag.
func asFlags(err error, kind Kind) string {
	var e *fault.Error
	if !errors.As(err, &e) {
		return fmt.Sprint(err)
	}
	return e.Text(func(s fault.Field) string {
		if s == SetAmount && kind == Memory {
			return "--bytes"
		} else if s == SetAmount {
			return "--size"
		}
		return "--" + string(s)
	})
}
