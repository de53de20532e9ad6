package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// rayToken is the token head's Ray asks for, read the way the pod gets it (ray.AuthOf): the
// Secret key its RAY_AUTH_TOKEN references, or the value written in its spec. It sets v.Auth and
// v.TokenFrom; when the token cannot be had it returns why, and the dashboard is not asked.
//
// The Secret is one GET by name, not a LIST: a LIST would read every Secret of the namespace,
// and the narrowest role (docs/rbac.md) grants get on that one name. The token goes no further
// than the request header: no View field, answer, log line or error holds it.
func (c *Clients) rayToken(ctx context.Context, head *corev1.Pod, v *rayapi.View) (string, *rayapi.Unreachable) {
	a := ray.AuthOf(head)
	v.Auth = string(a.Mode)
	switch {
	case a.Mode == ray.AuthNone:
		return "", nil
	case a.Mode == ray.AuthK8s:
		return "", &rayapi.Unreachable{Reason: rayapi.NoToken, Detail: "the cluster's Ray takes Kubernetes tokens (authOptions.enableK8sTokenAuth): " +
			"it would accept your own Kubernetes credential if its user holds verb \"ray:write\" on the RayCluster, and this tool does not send your credential to a pod"}
	case a.Unread != "":
		return "", &rayapi.Unreachable{Reason: rayapi.NoToken, Detail: "the cluster's Ray asks for a token (RAY_AUTH_MODE=token), and " + a.Unread + ", which this tool does not read"}
	case a.Inline:
		v.TokenFrom = "the pod spec (env " + ray.EnvAuthToken + ")"
		return ray.InlineToken(head), nil
	}
	v.TokenFrom = fmt.Sprintf("secret %s key %s", a.Secret, a.Key)
	s, err := c.Kube.CoreV1().Secrets(head.Namespace).Get(ctx, a.Secret, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return "", &rayapi.Unreachable{Reason: rayapi.TokenForbidden, Detail: fmt.Sprintf(
			"the cluster's Ray asks for a token, and you cannot get secrets %q in namespace %q, where it is (key %s): ask for RBAC verb \"get\" on \"secrets\" named %s (check with: kubectl auth can-i get secrets/%s -n %s)",
			a.Secret, head.Namespace, a.Key, a.Secret, a.Secret, head.Namespace)}
	case apierrors.IsNotFound(err):
		return "", &rayapi.Unreachable{Reason: rayapi.NoToken, Detail: fmt.Sprintf("the cluster's Ray asks for a token from secret %q, which does not exist in namespace %q", a.Secret, head.Namespace)}
	case err != nil:
		return "", &rayapi.Unreachable{Reason: rayapi.NoToken, Detail: fmt.Sprintf("the cluster's Ray asks for a token, and get secrets %q in namespace %q failed: %s", a.Secret, head.Namespace, oneLine(err))}
	}
	tok, ok := s.Data[a.Key]
	if !ok || len(tok) == 0 {
		return "", &rayapi.Unreachable{Reason: rayapi.NoToken, Detail: fmt.Sprintf("the cluster's Ray asks for a token from key %s of secret %q, which has no such key", a.Key, a.Secret)}
	}
	return string(tok), nil
}
