package ray

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func headWith(env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Env: env}}}}
}

func fromSecret(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}}
}

// AuthOf reads the pod as Ray reads its environment: KubeRay's token mode (a Secret key), its
// Kubernetes token mode (no shared token), a token written in the spec, and sources it does not read.
func TestAuthOf(t *testing.T) {
	mode := corev1.EnvVar{Name: EnvAuthMode, Value: "token"}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want Auth
	}{
		{"none", headWith(), Auth{}},
		{"disabled", headWith(corev1.EnvVar{Name: EnvAuthMode, Value: "disabled"}, fromSecret(EnvAuthToken, "x", "auth_token")), Auth{}},
		{"kuberay token", headWith(mode, fromSecret(EnvAuthToken, "raycluster-a", AuthTokenSecretKey)), Auth{Mode: AuthToken, Secret: "raycluster-a", Key: "auth_token"}},
		{"mode in capitals", headWith(corev1.EnvVar{Name: EnvAuthMode, Value: "TOKEN"}, fromSecret(EnvAuthToken, "s", "k")), Auth{Mode: AuthToken, Secret: "s", Key: "k"}},
		{"kubernetes tokens", headWith(mode, corev1.EnvVar{Name: EnvEnableK8sToken, Value: "true"}), Auth{Mode: AuthK8s}},
		{"inline", headWith(mode, corev1.EnvVar{Name: EnvAuthToken, Value: "abc"}), Auth{Mode: AuthToken, Inline: true}},
		{"token file", headWith(mode, corev1.EnvVar{Name: EnvAuthTokenPath, Value: "/etc/ray/token"}),
			Auth{Mode: AuthToken, Unread: "the token is read from a file in the pod (RAY_AUTH_TOKEN_PATH)"}},
		{"configmap", headWith(mode, corev1.EnvVar{Name: EnvAuthToken, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "t"}}}),
			Auth{Mode: AuthToken, Unread: "RAY_AUTH_TOKEN comes from a source other than a Secret key"}},
		{"the last entry wins", headWith(mode, fromSecret(EnvAuthToken, "old", "k"), fromSecret(EnvAuthToken, "new", "k")), Auth{Mode: AuthToken, Secret: "new", Key: "k"}},
	} {
		if got := AuthOf(tc.pod); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := InlineToken(headWith(mode, corev1.EnvVar{Name: EnvAuthToken, Value: "abc"})); got != "abc" {
		t.Errorf("inline token %q", got)
	}
	if got := AuthEnv([]corev1.EnvVar{mode, {Name: "OTHER", Value: "x"}}); len(got) != 1 || got[0] != mode {
		t.Errorf("AuthEnv kept %+v", got)
	}
}
