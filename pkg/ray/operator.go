package ray

import (
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// FixedEvictedHeadVersion is the first KubeRay release that replaces a head pod left in
// phase Failed with restartPolicy Always (kuberay #2125, fixed by PR #2217).
var FixedEvictedHeadVersion = version.MustParseSemantic("v1.2.0")

// NewestKnownRelease is the newest KubeRay release whose source this build's rules were read
// against: an operator newer than it is judged as it (Operator.Newer says when).
var NewestKnownRelease = version.MustParseSemantic("v1.7.0")

// Operator is a KubeRay operator Deployment found in the cluster.
type Operator struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Image     string `json:"image"`
	// Version is the image tag when it reads as a release ("v1.1.1"), else "".
	Version string `json:"version,omitempty"`
	// ReadyReplicas of the Deployment: an operator with none is not reconciling.
	ReadyReplicas int32 `json:"readyReplicas"`
	// JobStatusCheckTimeout is the operator container's RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS
	// (KubeRay v1.7.0), as written, when set to a value (not from a ConfigMap or Secret).
	JobStatusCheckTimeout string `json:"-"`
	// TZ is the operator container's TZ, its local zone: KubeRay v1.7.0 computes a RayCronJob's
	// ticks in it when the RayCronJob sets no timeZone. "" is UTC.
	TZ string `json:"-"`
	// FeatureGates is the operator's --feature-gates ("RayCronJob=true,..."), "" when not given.
	FeatureGates string `json:"-"`
}

// FeatureGate reports whether the operator's --feature-gates sets gate, and to what.
func (o Operator) FeatureGate(gate string) (on, set bool) {
	for _, kv := range strings.Split(o.FeatureGates, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if k == gate {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			return b && err == nil, true
		}
	}
	return false, false
}

// EnvJobStatusCheckTimeout is how long KubeRay v1.7.0 lets its reads of a Ray job's status fail
// before it fails the RayJob, in seconds (utils.RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS; a value
// that is not a positive integer means DefaultJobStatusCheckTimeout).
const (
	EnvJobStatusCheckTimeout     = "RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS"
	DefaultJobStatusCheckTimeout = 300 * time.Second
)

// StatusCheckTimeout is how long o lets a RayJob's status reads fail, as KubeRay v1.7.0's
// getJobStatusCheckTimeoutSeconds reads its setting.
func (o Operator) StatusCheckTimeout() time.Duration {
	if n, err := strconv.Atoi(o.JobStatusCheckTimeout); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return DefaultJobStatusCheckTimeout
}

// HasEvictedHeadBug reports whether this operator leaves a Failed head with restartPolicy
// Always in place. known is false when the version cannot be read from the image.
func (o Operator) HasEvictedHeadBug() (buggy, known bool) {
	v, err := version.ParseSemantic(o.Version)
	if err != nil {
		return false, false
	}
	return v.LessThan(FixedEvictedHeadVersion), true
}

// Newer reports whether this operator's release is newer than NewestKnownRelease (a later minor
// or major: a patch of the newest release behaves as it does).
func (o Operator) Newer() bool {
	v, err := version.ParseSemantic(o.Version)
	if err != nil {
		return false
	}
	return v.Major() > NewestKnownRelease.Major() || v.Major() == NewestKnownRelease.Major() && v.Minor() > NewestKnownRelease.Minor()
}

// FindOperators picks the KubeRay operators out of a list of Deployments, by the labels the
// Helm chart and kustomize manifests set, or by the operator image.
func FindOperators(deps []appsv1.Deployment) []Operator {
	var out []Operator
	for i := range deps {
		d := &deps[i]
		img, ok := operatorImage(d)
		if !ok {
			continue
		}
		out = append(out, Operator{
			Namespace:             d.Namespace,
			Name:                  d.Name,
			Image:                 img,
			Version:               ImageVersion(img),
			ReadyReplicas:         d.Status.ReadyReplicas,
			JobStatusCheckTimeout: operatorEnv(d, img, EnvJobStatusCheckTimeout),
			TZ:                    operatorEnv(d, img, "TZ"),
			FeatureGates:          operatorFlag(d, img, "--feature-gates"),
		})
	}
	return out
}

// operatorEnv is the value of the env var name of d's container running image, "" when unset or
// not written as a value.
func operatorEnv(d *appsv1.Deployment, image, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Image != image {
			continue
		}
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value
			}
		}
		return ""
	}
	return ""
}

// operatorFlag is the value of flag in the args (or command) of d's container running image:
// "--flag=value" or "--flag value", as the Helm chart and kustomize write them; "" when absent.
func operatorFlag(d *appsv1.Deployment, image, flag string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Image != image {
			continue
		}
		argv := append(append([]string(nil), c.Command...), c.Args...)
		for i, a := range argv {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				return v
			}
			if a == flag && i+1 < len(argv) {
				return argv[i+1]
			}
		}
	}
	return ""
}

func operatorImage(d *appsv1.Deployment) (string, bool) {
	labels := d.Labels
	byLabel := labels["app.kubernetes.io/name"] == "kuberay-operator" ||
		labels["app.kubernetes.io/component"] == "kuberay-operator" ||
		labels["app.kubernetes.io/name"] == "kuberay" && labels["app.kubernetes.io/component"] == "kuberay-operator"
	var first string
	for _, c := range d.Spec.Template.Spec.Containers {
		if first == "" {
			first = c.Image
		}
		if isOperatorImage(c.Image) {
			return c.Image, true
		}
	}
	return first, byLabel && first != ""
}

func isOperatorImage(image string) bool {
	repo := image
	if i := strings.IndexAny(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return strings.HasSuffix(repo, "kuberay/operator") || strings.HasSuffix(repo, "/kuberay-operator") || repo == "kuberay-operator"
}

// ImageVersion returns the image's tag when it is a semantic version ("v1.1.1" or "1.1.1"),
// normalised with a leading v; "" for latest, nightly, digests and the like.
func ImageVersion(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || i < strings.LastIndex(image, "/") {
		return ""
	}
	tag := strings.TrimPrefix(image[i+1:], "v")
	if _, err := version.ParseSemantic(tag); err != nil {
		return ""
	}
	return "v" + tag
}
