package ray

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Ray's token authentication (Ray 2.52 and later), as KubeRay sets it up in the Ray container
// of every pod (ray-operator controllers/ray/common/pod.go, SetContainerTokenAuthEnvVars; KubeRay
// v1.5.1 added authOptions, v1.6.0 secretName and enableK8sTokenAuth): RAY_AUTH_MODE=token, and
// either RAY_AUTH_TOKEN from a Secret (the cluster's own, named after it, which the operator
// creates, or authOptions.secretName), key auth_token, or, with enableK8sTokenAuth,
// RAY_ENABLE_K8S_TOKEN_AUTH=true and no shared token at all.
const (
	EnvAuthMode         = "RAY_AUTH_MODE"
	EnvAuthToken        = "RAY_AUTH_TOKEN"
	EnvAuthTokenPath    = "RAY_AUTH_TOKEN_PATH"
	EnvEnableK8sToken   = "RAY_ENABLE_K8S_TOKEN_AUTH"
	AuthTokenSecretKey  = "auth_token"
	AuthModeTokenValue  = "token"
	DashboardAuthHeader = "x-ray-authorization" // what KubeRay's dashboard client sends
)

// AuthMode is how a head's Ray asks callers of its dashboard to authenticate.
type AuthMode string

const (
	// AuthNone: no token asked (RAY_AUTH_MODE unset or disabled).
	AuthNone AuthMode = ""
	// AuthToken: a shared token (Ray's dashboard answers 401 without it, 403 with a wrong one).
	AuthToken AuthMode = "token"
	// AuthK8s: Kubernetes tokens. Ray sends the caller's bearer token to the API server's
	// TokenReview, then asks a SubjectAccessReview for verb "ray:write" on the RayCluster
	// (src/ray/rpc/authentication/k8s_util.cc): any token the API server accepts whose user
	// holds that verb.
	AuthK8s AuthMode = "k8s"
)

// Auth is how a head's Ray container gets its token: the mode, and where the token is. It holds
// no token.
type Auth struct {
	Mode AuthMode
	// Secret and Key name the Secret key RAY_AUTH_TOKEN comes from (env valueFrom.secretKeyRef).
	Secret, Key string
	// Inline: RAY_AUTH_TOKEN is written in the pod spec itself (env value).
	Inline bool
	// Unread, when set, says why the token's source is one this tool does not read (a token
	// file, a ConfigMap, envFrom): the dashboard is then not asked.
	Unread string
}

// AuthOf reads how head's Ray container (KubeRay's first container) is told to authenticate,
// from its environment, the way Ray reads it. A pod without RAY_AUTH_MODE=token asks for none.
func AuthOf(head *corev1.Pod) Auth {
	if head == nil || len(head.Spec.Containers) == 0 {
		return Auth{}
	}
	c := head.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e // a later entry of the same name wins, as in the kubelet
	}
	if !strings.EqualFold(strings.TrimSpace(env[EnvAuthMode].Value), AuthModeTokenValue) {
		return Auth{}
	}
	if on, err := strconv.ParseBool(env[EnvEnableK8sToken].Value); err == nil && on {
		return Auth{Mode: AuthK8s}
	}
	a := Auth{Mode: AuthToken}
	tok, ok := env[EnvAuthToken]
	switch {
	case ok && tok.ValueFrom != nil && tok.ValueFrom.SecretKeyRef != nil:
		a.Secret, a.Key = tok.ValueFrom.SecretKeyRef.Name, tok.ValueFrom.SecretKeyRef.Key
	case ok && tok.ValueFrom == nil && tok.Value != "":
		a.Inline = true
	case ok && tok.ValueFrom != nil:
		a.Unread = EnvAuthToken + " comes from a source other than a Secret key"
	case env[EnvAuthTokenPath].Value != "":
		a.Unread = "the token is read from a file in the pod (" + EnvAuthTokenPath + ")"
	default:
		a.Unread = EnvAuthToken + " is not set in the Ray container's env (envFrom, or a token file)"
	}
	return a
}

// AuthEnv are the entries of env that AuthOf reads: what a trimmed head keeps.
func AuthEnv(env []corev1.EnvVar) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		switch e.Name {
		case EnvAuthMode, EnvAuthToken, EnvAuthTokenPath, EnvEnableK8sToken:
			out = append(out, e)
		}
	}
	return out
}

// InlineToken is the token written in head's Ray container env (Auth.Inline).
func InlineToken(head *corev1.Pod) string {
	tok := ""
	for _, e := range head.Spec.Containers[0].Env {
		if e.Name == EnvAuthToken && e.ValueFrom == nil {
			tok = e.Value
		}
	}
	return tok
}
