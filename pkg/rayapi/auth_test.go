package rayapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// tokenDashboard is raytest's dashboard behind Ray's token authentication holding token: its base URL.
func tokenDashboard(t *testing.T, token string) string {
	t.Helper()
	open, _ := raytest.TokenDashboard(t, raytest.Quiet, token)
	tun, err := open(context.Background(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tun.Close)
	return "http://" + tun.Addr()
}

func readWith(t *testing.T, base, token string) (rayapi.View, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v rayapi.View
	var asked []string
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.URL.Path)
		return http.DefaultTransport.RoundTrip(r)
	})}
	rayapi.ReadKeeping(ctx, client, base, token, &v)
	return v, asked
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestReadSendsTheTokenAsKubeRayDoes(t *testing.T) {
	base := tokenDashboard(t, "s3cret-token-value")
	v, _ := readWith(t, base, "s3cret-token-value")
	if v.Unreachable != nil || !v.NodesRead || !v.AppsRead || !v.JobsRead || len(v.Failed) != 0 {
		t.Fatalf("with the right token every read answers: %+v", v)
	}
}

func TestReadStopsAtTheFirstRefusal(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{"", "GET /api/version answered HTTP 401: Unauthorized: Missing authentication token"},
		{"wrong", "GET /api/version answered HTTP 403: Forbidden: Invalid authentication token"},
	} {
		base := tokenDashboard(t, "s3cret-token-value")
		v, asked := readWith(t, base, tc.token)
		if v.Unreachable == nil || v.Unreachable.Reason != rayapi.Refused || v.Unreachable.Detail != tc.want {
			t.Errorf("token %q: want refused %q, got %+v", tc.token, tc.want, v.Unreachable)
		}
		if !v.GCSAlive || v.NodesRead || v.AppsRead || v.JobsRead || len(v.Failed) != 0 {
			t.Errorf("token %q: nothing past the refusal may be claimed or listed as failed: %+v", tc.token, v)
		}
		if got := strings.Join(asked, " "); got != rayapi.PathGCSHealth+" /api/version" {
			t.Errorf("token %q: a refused dashboard is asked nothing more; asked %s", tc.token, got)
		}
	}
}

// An answer that echoes the token (a proxy repeating the request's headers) keeps no byte of it.
func TestForgetLeavesNoTokenInTheView(t *testing.T) {
	const tok = "s3cret-token-value"
	v := rayapi.View{Answers: []rayapi.Answer{{Path: rayapi.PathJobs, Code: 500, Body: []byte("bad header x-ray-authorization: Bearer " + tok)}},
		Failed: []string{"GET /api/jobs/: HTTP 500: Bearer " + tok}, Unreachable: &rayapi.Unreachable{Reason: rayapi.Refused, Detail: "echo " + tok}}
	v.Forget(tok)
	if strings.Contains(string(v.Answers[0].Body)+v.Failed[0]+v.Unreachable.Detail, tok) {
		t.Fatalf("the token survived: %+v", v)
	}
}
