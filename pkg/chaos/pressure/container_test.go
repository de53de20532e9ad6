package pressure

import (
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
)

func TestContainerGolden(t *testing.T) {
	cases := []struct {
		golden string
		opts   Options
	}{
		{"disk-node-size.yaml", Options{Kind: Disk, Amount: "10Gi", Duration: 2 * time.Minute, Suffix: "abcde"}},
		{"disk-container-percent-of-limit.yaml", Options{Kind: Disk, Fill: FillContainer, Percent: 80, Duration: 2 * time.Minute, Suffix: "abcde"}},
		{"disk-node-percent-free.yaml", Options{Kind: Disk, Fill: FillNode, Percent: 95, Duration: 90 * time.Second, Suffix: "abcde", Image: "registry.local/tools:1"}},
		{"memory-percent-of-limit.yaml", Options{Kind: Memory, Percent: 90, Duration: 2 * time.Minute, Suffix: "abcde"}},
		{"memory-bytes-worker.yaml", Options{Kind: Memory, Amount: "2Gi", Duration: time.Minute, Suffix: "q1w2e", TargetContainer: "autoscaler"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			s, err := Plan(headPod(), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			ec := Container(s)
			if ec.Resources.Limits != nil || ec.Resources.Requests != nil || ec.Ports != nil {
				t.Errorf("ephemeral containers may not have resources or ports: %+v", ec)
			}
			b, err := yaml.Marshal(ec)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", c.golden), []byte("# basis: "+s.Basis+"\n"+string(b)))
		})
	}
}
