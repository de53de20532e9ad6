package rayapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// tokenDashboard plays Ray's token authentication in front of dashboard: the health checks are
// exempt; any other path answers 401 without a token and 403 with a wrong one, in Ray's words.
func tokenDashboard(t *testing.T, token string) (base string, asked func() []string) {
	t.Helper()
	inner := dashboard(t, nil)
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.URL.Path != PathGCSHealth {
			switch got := r.Header.Get(AuthHeader); {
			case got == "":
				http.Error(w, "Unauthorized: Missing authentication token", http.StatusUnauthorized)
				return
			case got != "Bearer "+token:
				http.Error(w, "Forbidden: Invalid authentication token", http.StatusForbidden)
				return
			}
		}
		resp, err := http.Get(inner + r.URL.RequestURI())
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { return paths }
}

func readWith(base, token string) View {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v View
	ReadKeeping(ctx, http.DefaultClient, base, token, &v)
	return v
}

func TestReadSendsTheTokenAsKubeRayDoes(t *testing.T) {
	base, _ := tokenDashboard(t, "s3cret-token-value")
	v := readWith(base, "s3cret-token-value")
	if v.Unreachable != nil || !v.NodesRead || !v.AppsRead || !v.JobsRead || len(v.Failed) != 0 {
		t.Fatalf("with the right token every read answers: %+v", v)
	}
}

func TestReadStopsAtTheFirstRefusal(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{"", "GET /api/version answered HTTP 401: Unauthorized: Missing authentication token"},
		{"wrong", "GET /api/version answered HTTP 403: Forbidden: Invalid authentication token"},
	} {
		base, asked := tokenDashboard(t, "s3cret-token-value")
		v := readWith(base, tc.token)
		if v.Unreachable == nil || v.Unreachable.Reason != Refused || v.Unreachable.Detail != tc.want {
			t.Errorf("token %q: want refused %q, got %+v", tc.token, tc.want, v.Unreachable)
		}
		if !v.GCSAlive || v.NodesRead || v.AppsRead || v.JobsRead || len(v.Failed) != 0 {
			t.Errorf("token %q: nothing past the refusal may be claimed or listed as failed: %+v", tc.token, v)
		}
		if got := strings.Join(asked(), " "); got != PathGCSHealth+" /api/version" {
			t.Errorf("token %q: a refused dashboard is asked nothing more; asked %s", tc.token, got)
		}
	}
}

// An answer that echoes the token (a proxy repeating the request's headers) keeps no byte of it.
func TestForgetLeavesNoTokenInTheView(t *testing.T) {
	const tok = "s3cret-token-value"
	v := View{Answers: []Answer{{Path: PathJobs, Code: 500, Body: []byte("bad header x-ray-authorization: Bearer " + tok)}},
		Failed: []string{"GET /api/jobs/: HTTP 500: Bearer " + tok}, Unreachable: &Unreachable{Reason: Refused, Detail: "echo " + tok}}
	v.Forget(tok)
	if strings.Contains(string(v.Answers[0].Body)+v.Failed[0]+v.Unreachable.Detail, tok) {
		t.Fatalf("the token survived: %+v", v)
	}
}
