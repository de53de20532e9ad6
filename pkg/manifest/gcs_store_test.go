package manifest

import (
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// doctor -f reads KubeRay v1.7.0's gcsFaultToleranceOptions.backend and storage.claimName beside
// the typed RayService (whose types predate them): a RayService whose generations share one
// claim is told its next zero-downtime upgrade cannot complete; one whose clusters get claims of
// their own, one that never upgrades, and one on Redis are not.
func TestGCSStoreDocuments(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/gcsstore/rayservices.yaml"}})
	snap := s.Snapshot("ml", time.Unix(0, 0))
	r := diagnose.Diagnose(snap, diagnose.Options{SpecOnly: true})
	var got []string
	for _, f := range r.Findings {
		if f.Rule == diagnose.RuleGCSStoreUpgradeBlocked {
			got = append(got, f.Evidence["rayService"]+" "+f.Evidence["claim"]+" "+f.Evidence["upgradeStrategy"])
		}
	}
	if len(got) != 1 || got[0] != "shared shared-gcs NewCluster" {
		t.Errorf("gcs-store-upgrade-blocked on %q, want on the RayService shared alone", got)
	}
}
