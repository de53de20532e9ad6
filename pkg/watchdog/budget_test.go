package watchdog

import (
	"regexp"
	"testing"
)

// The Lease's identity is the pod's name where POD_NAME is set (the chart sets it: on the host's
// network the hostname is the node's), else the hostname; a random suffix either way.
func TestIdentity(t *testing.T) {
	host := func() (string, error) { return "node-1", nil }
	if got := identityFrom("kubectl-ray-heal-abc12", host); !regexp.MustCompile(`^kubectl-ray-heal-abc12_[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("with POD_NAME: %q", got)
	}
	a, b := identityFrom("", host), identityFrom("", host)
	if !regexp.MustCompile(`^node-1_[0-9a-f]{8}$`).MatchString(a) || a == b {
		t.Errorf("without POD_NAME: %q, %q", a, b)
	}
}
