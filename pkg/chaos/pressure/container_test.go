package pressure

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

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
			golden(t, c.golden, []byte("# basis: "+s.Basis+"\n"+string(b)))
		})
	}
}
