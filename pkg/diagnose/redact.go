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

func isSecretName(name string) bool {
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
)

// minSecret: shorter values would blank out common words; passwords that short are not secret.
const minSecret = 4

func newRedactor(s *Snapshot) *redactor {
	set := map[string]bool{}
	add := func(v string) {
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if len(v) >= minSecret {
			set[v] = true
		}
	}
	// Every pod's env and command line is scanned, thousands of them: cheap substring tests that
	// every match must pass keep the regular expressions for the few strings that can match.
	fromText := func(v string) {
		if strings.Contains(v, "://") && strings.Contains(v, "@") {
			for _, m := range uriPassword.FindAllStringSubmatch(v, -1) {
				add(m[2])
			}
		}
		if containsFold(v, "password") {
			for _, m := range flagPassword.FindAllStringSubmatch(v, -1) {
				add(m[2])
			}
		}
	}
	fromContainers := func(cs []corev1.Container) {
		for _, c := range cs {
			for _, e := range c.Env {
				if isSecretName(e.Name) {
					add(e.Value)
				}
				fromText(e.Value)
			}
			for _, a := range append(append([]string{}, c.Command...), c.Args...) {
				fromText(a)
			}
		}
	}
	fromPodSpec := func(p *corev1.PodSpec) {
		fromContainers(p.InitContainers)
		fromContainers(p.Containers)
	}
	fromCluster := func(spec *rayv1.RayClusterSpec) {
		if spec == nil {
			return
		}
		fromPodSpec(&spec.HeadGroupSpec.Template.Spec)
		for k, v := range spec.HeadGroupSpec.RayStartParams {
			if isSecretName(k) {
				add(v)
			}
			fromText(v)
		}
		for i := range spec.WorkerGroupSpecs {
			fromPodSpec(&spec.WorkerGroupSpecs[i].Template.Spec)
			for k, v := range spec.WorkerGroupSpecs[i].RayStartParams {
				if isSecretName(k) {
					add(v)
				}
			}
		}
		if ft := spec.GcsFaultToleranceOptions; ft != nil {
			fromText(ft.RedisAddress)
			if ft.RedisPassword != nil {
				add(ft.RedisPassword.Value)
			}
			if ft.RedisUsername != nil {
				add(ft.RedisUsername.Value)
			}
		}
	}
	for i := range s.Pods {
		fromPodSpec(&s.Pods[i].Spec)
	}
	for i := range s.Clusters {
		fromCluster(&s.Clusters[i].Spec)
	}
	for i := range s.Services {
		fromCluster(&s.Services[i].Spec.RayClusterSpec)
	}
	for i := range s.Jobs {
		fromCluster(s.Jobs[i].Spec.RayClusterSpec)
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

func (r *redactor) text(s string) string {
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	s = uriPassword.ReplaceAllString(s, "${1}"+Redacted+"@")
	return flagPassword.ReplaceAllString(s, "${1}"+Redacted)
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
