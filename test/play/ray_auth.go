package play

import (
	"context"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlayDashboardTokenAuth: a head whose Ray container has RAY_AUTH_MODE=token (KubeRay's
// authOptions.mode token) holds the token its RAY_AUTH_TOKEN names (a Secret key, read when the
// pod starts, as the kubelet resolves env; or the value in the spec), and its dashboard refuses
// every path but the health checks: 401 "Unauthorized: Missing authentication token" without a
// token, 403 "Forbidden: Invalid authentication token" with another (Authorization first, then
// x-ray-authorization, as Ray's http_token_authentication.py reads them).
const PlayDashboardTokenAuth = "dashboard: token authentication when the head's RAY_AUTH_MODE=token"

// rayPublicPaths are what Ray's dashboard answers without a token (dashboard/http_server_head.py).
var rayPublicPaths = map[string]bool{"/": true, "/favicon.ico": true, "/api/authentication_mode": true, "/api/authenticate": true,
	"/api/healthz": true, "/api/gcs_healthz": true, "/api/local_raylet_healthz": true, "/-/healthz": true}

// headToken is the token p's Ray holds, and whether it asks for one (PlayDashboardTokenAuth).
// A Secret that cannot be read leaves a token no caller can present, as a pod that never got it.
func (r *Ray) headToken(p *corev1.Pod) (token string, asks bool) {
	if len(p.Spec.Containers) == 0 {
		return "", false
	}
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == "RAY_AUTH_MODE" && strings.EqualFold(e.Value, "token") {
			asks = true
		}
	}
	if !asks {
		return "", false
	}
	for _, e := range p.Spec.Containers[0].Env {
		switch {
		case e.Name != "RAY_AUTH_TOKEN":
		case e.ValueFrom == nil:
			token = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s, err := r.kube.CoreV1().Secrets(p.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
			if err != nil {
				r.fail(err)
				return "", true
			}
			token = string(s.Data[ref.Key])
		}
	}
	return token, true
}

// refused answers as Ray's token authentication does, and reports whether it answered.
func refused(n *rayNode, rw http.ResponseWriter, req *http.Request) bool {
	if !n.asksToken || rayPublicPaths[req.URL.Path] {
		return false
	}
	got := req.Header.Get("Authorization")
	if got == "" {
		got = req.Header.Get("x-ray-authorization")
	}
	switch {
	case got == "":
		http.Error(rw, "Unauthorized: Missing authentication token", http.StatusUnauthorized)
	case n.token == "" || got != "Bearer "+n.token:
		http.Error(rw, "Forbidden: Invalid authentication token", http.StatusForbidden)
	default:
		return false
	}
	return true
}
