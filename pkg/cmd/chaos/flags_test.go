package chaos

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

// The probe flags parse to the settings, and Complete records which were given (a default and a
// given value differ for --after and --port): checked without a cluster, the command stopping
// at runF.
func TestProbeFlagsParse(t *testing.T) {
	o, err := cmdtest.Parse(t, NewHeadKillCmd, "rayservice/demo", "-n", "ml", "--after", "3s", "--service", "demo-serve-svc", "--port", "8000", "--max-errors", "5")
	if err != nil || o == nil {
		t.Fatalf("head-kill: %v", err)
	}
	if o.s.RayService != "demo" || o.s.Cluster != "" || o.s.Namespace != "ml" {
		t.Errorf("head-kill target: service %q cluster %q namespace %q", o.s.RayService, o.s.Cluster, o.s.Namespace)
	}
	if !o.s.AfterSet || !o.s.PortSet || o.s.Port != 8000 || o.s.Service != "demo-serve-svc" {
		t.Errorf("head-kill probe: afterSet %v portSet %v port %d service %q", o.s.AfterSet, o.s.PortSet, o.s.Port, o.s.Service)
	}
	if !o.s.MaxErrorsSet || o.s.MaxErrors != 5 || o.s.MinAvailabilitySet {
		t.Errorf("head-kill SLO: maxErrorsSet %v maxErrors %d minAvailabilitySet %v", o.s.MaxErrorsSet, o.s.MaxErrors, o.s.MinAvailabilitySet)
	}

	d, err := cmdtest.Parse(t, NewDrainCmd, "--node-of", "rayservice/demo", "--role", "worker")
	if err != nil || d == nil {
		t.Fatalf("drain: %v", err)
	}
	if d.s.AfterSet || d.s.PortSet {
		t.Errorf("drain: flags not given are recorded as given: afterSet %v portSet %v", d.s.AfterSet, d.s.PortSet)
	}
}
