package diagnose

import (
	"regexp"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// Redacted replaces a secret value in any text doctor prints.
const Redacted = "[redacted]"

// No rule quotes env values, secret references or Redis addresses. The redactor is the second
// line of defence for text doctor quotes from the API (kubelet and operator messages), which can
// echo what a user put in a command line or an address: every secret value found in the snapshot
// is replaced wherever it appears, and so is the password of any URI.
type redactor struct {
	secrets []string
}

// secretWords mark a name (env variable, start parameter) whose value is a secret, matched
// case-insensitively anywhere in the name ("api_key" and "apikey" both).
var secretWords = []string{"pass", "secret", "token", "credential", "auth", "private", "apikey", "api_key", "accesskey", "access_key"}

// IsSecretName reports whether a name (an env variable, a start parameter, a query parameter)
// holds a secret by its look.
func IsSecretName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

var (
	uriPassword  = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)([^@\s]+)@`)
	flagPassword = regexp.MustCompile(`(?i)(--redis-password[= ]+|--password[= ]+)("[^"]*"|'[^']*'|\S+)`)
	// queryToken: a URL's query parameter, whose value is a secret when its name sounds like one
	// (https://pypi.example/simple?token=..., a runtime_env's working_dir?access_token=...).
	queryToken = regexp.MustCompile(`([?&]([A-Za-z0-9_.-]+)=)([^&\s"'#]+)`)
)

// minSecret: shorter values would blank out common words; passwords that short are not secret.
const minSecret = 4

// Secrets is a set of secret values found in specs: env values under secret-sounding names,
// passwords in URIs and --password flags, the Redis password of GCS fault tolerance. The loader
// collects them while it trims listed objects (TrimPod, TrimCluster), so that the specs can be
// dropped and the values still redacted.
type Secrets map[string]struct{}

func (set Secrets) add(v string) {
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	if len(v) >= minSecret {
		set[v] = struct{}{}
	}
}

// fromText picks the secrets out of free text. Every pod's env and command line is scanned,
// thousands of them: cheap substring tests that every match must pass keep the regular
// expressions for the few strings that can match.
func (set Secrets) fromText(v string) {
	if strings.Contains(v, "://") && strings.Contains(v, "@") {
		for _, m := range uriPassword.FindAllStringSubmatch(v, -1) {
			set.add(m[2])
		}
	}
	if containsFold(v, "password") {
		for _, m := range flagPassword.FindAllStringSubmatch(v, -1) {
			set.add(m[2])
		}
	}
	if strings.Contains(v, "://") && strings.Contains(v, "=") {
		for _, m := range queryToken.FindAllStringSubmatch(v, -1) {
			if IsSecretName(m[2]) {
				set.add(m[3])
			}
		}
	}
}

// Add adds v (trimmed of spaces and quotes) when it is long enough to be a secret.
func (set Secrets) Add(v string) { set.add(v) }

// AddText adds the secrets free text holds: passwords of URIs and --password flags, and URL
// query parameters named as secrets.
func (set Secrets) AddText(v string) { set.fromText(v) }

// addRayJobSpec collects what a RayJob's entrypoint and runtime environment hold: a Ray job's
// message can echo its command line, and runtimeEnvYAML's env_vars ("API_TOKEN: abc") are the
// job's environment.
func (set Secrets) addRayJobSpec(spec *rayv1.RayJobSpec) {
	set.fromText(spec.Entrypoint)
	set.fromText(spec.RuntimeEnvYAML)
	for _, line := range strings.Split(spec.RuntimeEnvYAML, "\n") {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && IsSecretName(name) {
			set.add(value)
		}
	}
}

func (set Secrets) fromContainers(cs []corev1.Container) {
	for _, c := range cs {
		for _, e := range c.Env {
			if IsSecretName(e.Name) {
				set.add(e.Value)
			}
			set.fromText(e.Value)
		}
		for _, a := range c.Command {
			set.fromText(a)
		}
		for _, a := range c.Args {
			set.fromText(a)
		}
	}
}

// AddPodSpec adds the secrets of a pod spec's containers.
func (set Secrets) AddPodSpec(p *corev1.PodSpec) {
	set.fromContainers(p.InitContainers)
	set.fromContainers(p.Containers)
}

// AddClusterSpec adds the secrets of a RayCluster spec: its pod templates, start parameters and
// GCS fault tolerance options.
func (set Secrets) AddClusterSpec(spec *rayv1.RayClusterSpec) {
	if spec == nil {
		return
	}
	set.AddPodSpec(&spec.HeadGroupSpec.Template.Spec)
	for k, v := range spec.HeadGroupSpec.RayStartParams {
		if IsSecretName(k) {
			set.add(v)
		}
		set.fromText(v)
	}
	for i := range spec.WorkerGroupSpecs {
		set.AddPodSpec(&spec.WorkerGroupSpecs[i].Template.Spec)
		for k, v := range spec.WorkerGroupSpecs[i].RayStartParams {
			if IsSecretName(k) {
				set.add(v)
			}
		}
	}
	if ft := spec.GcsFaultToleranceOptions; ft != nil {
		set.fromText(ft.RedisAddress)
		if ft.RedisPassword != nil {
			set.add(ft.RedisPassword.Value)
		}
		if ft.RedisUsername != nil {
			set.add(ft.RedisUsername.Value)
		}
	}
}

// Merge adds every value of other.
func (set Secrets) Merge(other Secrets) {
	for v := range other {
		set[v] = struct{}{}
	}
}

// newRedactor knows the secrets the loader collected (s.Secrets) and those of every spec the
// snapshot still holds.
func newRedactor(s *Snapshot) *redactor { return newRedactorWith(s, nil) }

func newRedactorWith(s *Snapshot, extra Secrets) *redactor {
	set := Secrets{}
	set.Merge(s.Secrets)
	set.Merge(extra)
	for i := range s.Pods {
		set.AddPodSpec(&s.Pods[i].Spec)
	}
	for i := range s.Clusters {
		set.AddClusterSpec(&s.Clusters[i].Spec)
	}
	for i := range s.Services {
		set.AddClusterSpec(&s.Services[i].Spec.RayClusterSpec)
	}
	for i := range s.Jobs {
		set.AddClusterSpec(s.Jobs[i].Spec.RayClusterSpec)
		set.addRayJobSpec(&s.Jobs[i].Spec)
	}
	r := &redactor{}
	for v := range set {
		r.secrets = append(r.secrets, v)
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(r.secrets, func(i, j int) bool {
		if len(r.secrets[i]) != len(r.secrets[j]) {
			return len(r.secrets[i]) > len(r.secrets[j])
		}
		return r.secrets[i] < r.secrets[j]
	})
	return r
}

// Redactor is the function doctor's reports go through, for other commands that quote text from
// the API: every secret value found in s, and the password of any URI or --password flag,
// replaced by Redacted.
func Redactor(s *Snapshot) func(string) string { return newRedactor(s).text }

// RedactorWith is Redactor knowing extra secrets too: those a caller found in what it writes
// beyond the snapshot's specs (the bundle's Secret references, say).
func RedactorWith(s *Snapshot, extra Secrets) func(string) string {
	return newRedactorWith(s, extra).text
}

func (r *redactor) text(s string) string {
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	s = uriPassword.ReplaceAllString(s, "${1}"+Redacted+"@")
	s = flagPassword.ReplaceAllString(s, "${1}"+Redacted)
	if strings.Contains(s, "=") && (strings.Contains(s, "?") || strings.Contains(s, "&")) {
		s = queryToken.ReplaceAllStringFunc(s, func(m string) string {
			g := queryToken.FindStringSubmatch(m)
			if !IsSecretName(g[2]) || g[3] == Redacted {
				return m
			}
			return g[1] + Redacted
		})
	}
	return s
}

func (r *redactor) report(rep *Report) {
	for i := range rep.Findings {
		f := &rep.Findings[i]
		f.Message = r.text(f.Message)
		f.Remedy = r.text(f.Remedy)
		for k, v := range f.Evidence {
			f.Evidence[k] = r.text(v)
		}
	}
	for i := range rep.Blind {
		rep.Blind[i].Reason = r.text(rep.Blind[i].Reason)
	}
}
