package cmd

import (
	"reflect"
	"testing"
)

// The names the binary is installed under decide what it does: make install and krew create
// them, kubectl finds them on PATH.
func TestDispatch(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		want    []string
		display string
	}{
		{[]string{"/usr/local/bin/kubectl-ray", "doctor", "-A"}, []string{"doctor", "-A"}, "kubectl ray"},
		{[]string{"kubectl-ray-doctor", "-A"}, []string{"doctor", "-A"}, "kubectl ray"},
		{[]string{"kubectl-ray-heal.exe", "x"}, []string{"heal", "x"}, "kubectl ray"},
		{[]string{"/home/u/.krew/bin/kubectl-ray_ops", "chaos", "head-kill"}, []string{"chaos", "head-kill"}, "kubectl ray-ops"},
		// kubectl's completion hooks: the words after the plugin name, the last one to complete.
		{[]string{"/bin/kubectl_complete-ray", "doctor", ""}, []string{"__complete", "doctor", ""}, "kubectl ray"},
		{[]string{"/bin/kubectl_complete-ray-doctor", "-n", "ml", "ray"}, []string{"__complete", "doctor", "-n", "ml", "ray"}, "kubectl ray"},
		{[]string{"kubectl_complete-ray_ops", ""}, []string{"__complete", ""}, "kubectl ray-ops"},
		// A name it does not know (a copy renamed by hand) acts as the plain plugin.
		{[]string{"kubectl-ray-other", "version"}, []string{"version"}, "kubectl ray"},
		{nil, nil, "kubectl ray"},
	} {
		got, display := dispatch(tc.argv)
		if !reflect.DeepEqual(got, tc.want) || display != tc.display {
			t.Errorf("dispatch(%q) = %q, %q; want %q, %q", tc.argv, got, display, tc.want, tc.display)
		}
	}
}
