package diagnose

import "testing"

// Each wording of a gate refusal names its gate; other refusals none.
func TestRefusedGate(t *testing.T) {
	for why, want := range map[string]string{
		"spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled":                                                                                      "RayClusterNetworkPolicy",
		"RayClusterHistoryServer feature gate is not enabled":                                                                                                                     "RayClusterHistoryServer",
		"RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy":                                                                                               "RayJobDeletionPolicy",
		"the embedded RocksDB GCS fault tolerance backend (GcsFaultToleranceOptions.Backend: 'rocksdb') requires the GCSFaultToleranceEmbeddedStorage feature gate to be enabled": "GCSFaultToleranceEmbeddedStorage",
		"worker group fast: priority is set, but minimum Ray version is 2.56.0, got 2.52.0":                                                                                       "",
	} {
		if got := refusedGate(why); got != want {
			t.Errorf("refusedGate(%q) = %q, want %q", why, got, want)
		}
	}
}
