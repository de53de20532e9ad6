package doctor_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// withDashboard has the run's port-forwards reach a dashboard answering bodies, and returns
// the pods they went to.
func withDashboard(t *testing.T, bodies map[string]string) (func(*cmdutil.Factory), func() []string) {
	return withTokenDashboard(t, bodies, "")
}

// withTokenDashboard is withDashboard behind Ray's token authentication holding token ("" for none).
func withTokenDashboard(t *testing.T, bodies map[string]string, token string) (func(*cmdutil.Factory), func() []string) {
	open, forwarded := raytest.TokenDashboard(t, bodies, token)
	return func(f *cmdutil.Factory) {
		next := f.NewClients
		f.NewClients = func(fl *genericclioptions.ConfigFlags) (*kube.Clients, error) {
			c, err := next(fl)
			if c != nil {
				c.Tunnels = open
			}
			return c, err
		}
	}, forwarded
}

// Without --ray only a named target's dashboard is read; --ray reads every cluster's head;
// --ray=false none.
func TestRayIsAskedWhenNamedOrAsked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-n", "ml"}, nil},
		{[]string{"-n", "ml", "raycluster-b"}, []string{"ml/raycluster-b-head-zzzzz"}},
		{[]string{"-n", "ml", "rayservice/svc"}, []string{"ml/svc-raycluster-q7x9z-head-fghij"}},
		{[]string{"-n", "ml", "raycluster-b", "--ray=false"}, nil},
		// raycluster-a's head was evicted: nothing to forward to (ray-dashboard-unreachable).
		{[]string{"-n", "ml", "--ray"}, []string{"ml/raycluster-b-head-zzzzz", "ml/svc-raycluster-q7x9z-head-fghij"}},
	} {
		configure, forwarded := withDashboard(t, raytest.Quiet)
		runWith(t, "scene", nil, configure, tc.args...)
		got := forwarded()
		slices.Sort(got)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("doctor %v forwarded to %v, want %v", tc.args, got, tc.want)
		}
	}
}

// A Serve application Ray says failed is an error with Ray's message, although every pod is
// Ready; the JSON report carries what Ray counted, by adding fields.
func TestRayServeAppFailed(t *testing.T) {
	bodies := map[string]string{}
	for k, v := range raytest.Quiet {
		bodies[k] = v
	}
	bodies["/api/serve/applications/"] = `{"applications":{"fruit_app":{"name":"fruit_app","status":"DEPLOY_FAILED","message":"ModuleNotFoundError: No module named 'fruit'","deployments":{"FruitMarket":{"name":"FruitMarket","status":"DEPLOY_FAILED","message":"failed to start 3 times"}}}}}`
	configure, _ := withDashboard(t, bodies)
	r := runWith(t, "scene", nil, configure, "-n", "ml", "rayservice/svc", "-o", "json")
	if r.code != exit.CheckFailed {
		t.Errorf("exit %d, want %d (an error finding)", r.code, exit.CheckFailed)
	}
	var doc struct {
		Findings []struct{ Rule, Severity, Message string }
		Clusters []struct {
			Name string
			Ray  *struct {
				Read     bool
				GCSAlive bool `json:"gcsAlive"`
				Apps     map[string]int
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, f := range doc.Findings {
		if f.Rule == "serve-app-failed" && f.Severity == "error" {
			msg = f.Message
		}
	}
	if !strings.Contains(msg, "Serve application fruit_app is DEPLOY_FAILED: ModuleNotFoundError: No module named 'fruit'; deployments: FruitMarket DEPLOY_FAILED: failed to start 3 times") {
		t.Errorf("serve-app-failed message %q\n%s", msg, r.stdout)
	}
	if len(doc.Clusters) != 1 || doc.Clusters[0].Ray == nil || !doc.Clusters[0].Ray.Read || !doc.Clusters[0].Ray.GCSAlive || doc.Clusters[0].Ray.Apps["DEPLOY_FAILED"] != 1 {
		t.Errorf("clusters %+v", doc.Clusters)
	}
}

// An unreachable dashboard is one warning saying why, never a healthy Ray: in JUnit, Ray's
// other rules are skipped with the reason. Here the port answers 404 to everything: not a
// dashboard.
func TestRayUnreachableIsOneWarning(t *testing.T) {
	configure, _ := withDashboard(t, map[string]string{})
	r := runWith(t, "scene", nil, configure, "-n", "ml", "raycluster-b", "-o", "junit", "--fail-on", "warning")
	if r.code != exit.CheckFailed {
		t.Errorf("exit %d with --fail-on warning", r.code)
	}
	golden.Assert(t, filepath.Join("testdata", "ray-unreachable-junit.golden"), []byte(r.stdout))
}
