package diagnose

import (
	"strings"
	"testing"
)

// Under a release that removes the finalizer itself, a finalizer past that release's timeout says
// the operator would have removed it, and when.
func TestGCSFTFinalizerForceRemovalMissed(t *testing.T) {
	f := loadFixture(t, "gcs-ft-finalizer-force-missed")
	for _, fd := range Diagnose(&f.snap, DefaultOptions()).Findings {
		if fd.Rule != RuleGCSFTFinalizerStuck {
			continue
		}
		if !strings.Contains(fd.Message, "KubeRay v1.7.0 removes it itself 5m after the deletion began once the head is gone (ForceDeletedStuckCluster)") || fd.Evidence["forceRemovalAfter"] != "5m" {
			t.Errorf("message %q, evidence %v", fd.Message, fd.Evidence)
		}
		return
	}
	t.Fatal("no gcs-ft-finalizer-stuck")
}
