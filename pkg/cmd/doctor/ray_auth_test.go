package doctor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kfake "k8s.io/client-go/kubernetes/fake"
	ktesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
)

// The token KubeRay put in the cluster's Secret, which Ray holds; it must appear in no output.
const rayToken = "tOk3n-7f1c2e9a4b8d6035-ray-auth"

// authHead makes raycluster-b's head ask for a token as KubeRay sets it up (authOptions.mode
// token): RAY_AUTH_MODE=token and RAY_AUTH_TOKEN from key auth_token of Secret raycluster-b,
// which holds secretValue ("" for no Secret). forbid refuses get on secrets.
func authHead(t *testing.T, secretValue string, forbid bool) func(*kfake.Clientset, *rayfake.Clientset) {
	return func(kc *kfake.Clientset, _ *rayfake.Clientset) {
		ctx := context.Background()
		p, err := kc.CoreV1().Pods("ml").Get(ctx, "raycluster-b-head-zzzzz", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env,
			corev1.EnvVar{Name: "RAY_AUTH_MODE", Value: "token"},
			corev1.EnvVar{Name: "RAY_AUTH_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "raycluster-b"}, Key: "auth_token"}}})
		if _, err := kc.CoreV1().Pods("ml").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if secretValue != "" {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "raycluster-b"}, Data: map[string][]byte{"auth_token": []byte(secretValue)}}
			if _, err := kc.CoreV1().Secrets("ml").Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if forbid {
			kc.PrependReactor("get", "secrets", func(ktesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "raycluster-b", nil)
			})
		}
	}
}

// On a cluster whose Ray asks for a token, doctor reads it where the pod gets it and Ray's view
// is read; when it cannot present the right token, one ray-dashboard-auth finding says why
// (the verb and resource, the missing Secret, the refusal), never a healthy Ray. The token is in
// no byte of any output.
func TestRayTokenAuth(t *testing.T) {
	for _, tc := range []struct {
		name          string
		secret        string // the Secret's token; "" for none
		forbid        bool
		plainHead     bool   // the head's spec says nothing of a token (the dashboard still asks)
		reason, words string // "" reason: Ray's view read
	}{
		{name: "read", secret: rayToken},
		{name: "forbidden", secret: rayToken, forbid: true, reason: "token-forbidden",
			words: `you cannot get secrets "raycluster-b" in namespace "ml", where it is (key auth_token): ask for RBAC verb "get" on "secrets" named raycluster-b`},
		{name: "no-secret", reason: "no-token", words: `asks for a token from secret "raycluster-b", which does not exist in namespace "ml"`},
		{name: "wrong-token", secret: "an-older-token-value", reason: "refused",
			words: "GET /api/version answered HTTP 403: Forbidden: Invalid authentication token; doctor sent the token from secret raycluster-b key auth_token"},
		{name: "unsaid", plainHead: true, reason: "refused",
			words: "GET /api/version answered HTTP 401: Unauthorized: Missing authentication token; doctor sent no token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setup := authHead(t, tc.secret, tc.forbid)
			if tc.plainHead {
				setup = nil
			}
			var outputs []string
			configure, _ := withTokenDashboard(t, raytest.Quiet, rayToken)
			for _, o := range []string{"json", "table", "junit", "yaml", "wide"} {
				r := runWith(t, "scene", setup, configure, "-n", "ml", "raycluster-b", "-o", o)
				outputs = append(outputs, r.stdout, r.stderr)
				if o != "json" {
					continue
				}
				var doc struct {
					Findings []struct {
						Rule, Message string
						Evidence      map[string]string
					}
					Clusters []struct {
						Ray *struct{ Read bool }
					}
				}
				if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
					t.Fatalf("%v\n%s", err, r.stdout)
				}
				var auth []string
				for _, f := range doc.Findings {
					if f.Rule == "ray-dashboard-auth" {
						auth = append(auth, f.Evidence["reason"]+": "+f.Message)
					}
					if f.Rule == "ray-dashboard-unreachable" {
						t.Errorf("a token problem is not an unreachable dashboard: %s", f.Message)
					}
				}
				read := len(doc.Clusters) == 1 && doc.Clusters[0].Ray != nil && doc.Clusters[0].Ray.Read
				switch {
				case tc.reason == "" && (len(auth) != 0 || !read):
					t.Errorf("the token was there to read: want Ray's view read and no finding, got %v, read %v", auth, read)
				case tc.reason != "" && (len(auth) != 1 || !strings.HasPrefix(auth[0], tc.reason+": ") || !strings.Contains(auth[0], tc.words)):
					t.Errorf("want one ray-dashboard-auth finding %s saying %q, got %q", tc.reason, tc.words, auth)
				case tc.reason != "" && read:
					t.Errorf("a view refused must not count as read")
				}
			}
			for _, out := range outputs {
				if strings.Contains(out, rayToken) {
					t.Fatalf("the token is in doctor's output:\n%s", out)
				}
			}
		})
	}
}
