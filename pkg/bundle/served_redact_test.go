package bundle

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// A RayCluster written as served carries fields the API types do not know (KubeRay v1.7.0's
// historyServerOptions with its collector's env, say): what they hold is redacted as the rest of
// the object is, and no byte of the archive holds the secrets planted there.
func TestServedFieldsAreRedacted(t *testing.T) {
	s := scene()
	st := NewStream()
	secrets := redact.Set{}
	for i := range s.Clusters {
		extra := `"historyServerOptions":{"collectorOptions":{"image":"collector:1","env":[` +
			`{"name":"AWS_SECRET_ACCESS_KEY","value":"served-secret-1"},{"name":"S3_URL","value":"https://user:served-secret-2@bucket.example/logs"}]}},` +
			`"tlsOptions":{"enabled":true},`
		raw := []byte(strings.Replace(string(servedJSON(t, &s.Clusters[i])), `"spec":{`, `"spec":{`+extra, 1))
		st.Cluster(&s.Clusters[i], raw)
		state.TrimCluster(&s.Clusters[i], secrets)
	}
	st.Close()
	p := MakePlan(s, nil, PlanOptions{Stream: st})
	files := writtenArchive(t, s, p, st)
	sawHistory := false
	for name, b := range files {
		for _, secret := range []string{"served-secret-1", "served-secret-2"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %s:\n%s", name, secret, b)
			}
		}
		if strings.Contains(string(b), "historyServerOptions") && strings.Contains(string(b), "tlsOptions") {
			sawHistory = true
		}
	}
	if !sawHistory {
		t.Error("no file kept the fields the API types do not know")
	}
}

// The kinds a bundle keeps only as served JSON (KubeRay v1.7.0's RayCronJob, the Gateway API's
// Gateway and HTTPRoute KubeRay makes) are redacted like the rest: no byte of the archive holds
// what is planted in a RayCronJob's template, a Gateway's annotations or an HTTPRoute's filter.
func TestServedOnlyKindsAreRedacted(t *testing.T) {
	s := scene()
	st := NewStream()
	cron := &ray.RayCronJob{}
	cron.Name, cron.Namespace = "nightly", "ml"
	st.RayCronJob(cron, []byte(`{"apiVersion":"ray.io/v1","kind":"RayCronJob","metadata":{"name":"nightly","namespace":"ml"},`+
		`"spec":{"schedule":"* * * * *","jobTemplate":{"entrypoint":"python train.py --api-key served-secret-3",`+
		`"runtimeEnvYAML":"env_vars:\n  HF_TOKEN: served-secret-4\n"}}}`))
	st.Close()
	s.CronJobs = []ray.RayCronJob{*cron}
	gw := ray.Gateway{Served: []byte(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"svc-gateway","namespace":"ml",` +
		`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"metadata\":{\"annotations\":{\"token\":\"served-secret-5\"}}}"}},` +
		`"spec":{"gatewayClassName":"istio","listeners":[{"name":"http","protocol":"HTTP","port":80}]}}`)}
	gw.Name, gw.Namespace = "svc-gateway", "ml"
	route := ray.HTTPRoute{Served: []byte(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"svc-httproute","namespace":"ml"},` +
		`"spec":{"rules":[{"filters":[{"type":"RequestHeaderModifier","requestHeaderModifier":{"set":[{"name":"Authorization","value":"Bearer served-secret-6"}]}}]}]}}`)}
	route.Name, route.Namespace = "svc-httproute", "ml"
	s.Gateways, s.HTTPRoutes = []ray.Gateway{gw}, []ray.HTTPRoute{route}
	p := MakePlan(s, nil, PlanOptions{Stream: st})
	if len(p.CronJobs) != 1 || len(p.Gateways) != 1 || len(p.HTTPRoutes) != 1 {
		t.Fatalf("plan: %d RayCronJobs, %d Gateways, %d HTTPRoutes, want one each", len(p.CronJobs), len(p.Gateways), len(p.HTTPRoutes))
	}
	files := writtenArchive(t, s, p, st)
	kept := 0
	for name, b := range files {
		for _, secret := range []string{"served-secret-3", "served-secret-4", "served-secret-5", "served-secret-6"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %s:\n%s", name, secret, b)
			}
		}
		for _, kind := range []string{"/raycronjobs/nightly.json", "/gateways/svc-gateway.json", "/httproutes/svc-httproute.json"} {
			if strings.HasSuffix(name, kind) {
				kept++
			}
		}
	}
	if kept != 3 {
		t.Errorf("%d of the three objects kept: %v", kept, slices.Collect(maps.Keys(files)))
	}
}

// writtenArchive renders plan p of s (its objects kept by st) with nothing collected, writes the
// archive through the redactor, and returns its files.
func writtenArchive(t *testing.T, s *state.Snapshot, p Plan, st *Stream) map[string][]byte {
	t.Helper()
	c := Render(s, p, Collected{}, st)
	r := redact.New(st.Secrets(), c.Found)
	path := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := Write(path, time.Now(), []byte("# index\n"), c.Files, c.Spooled, r, false); err != nil {
		t.Fatal(err)
	}
	files, _ := testio.Untar(t, path)
	return files
}
