package bundle

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
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
	c := Render(s, p, Collected{}, st)
	r := redact.New(st.Secrets(), c.Found)
	path := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := Write(path, time.Now(), []byte("# index\n"), c.Files, c.Spooled, r, false); err != nil {
		t.Fatal(err)
	}
	files, _ := testio.Untar(t, path)
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
