package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The checksums here are GoReleaser's output format; the golden file is the whole manifest, so a
// change in URI pattern, bin name or caveats shows up as a diff.
const sums = `
1111111111111111111111111111111111111111111111111111111111111111  kubectl-ray_1.2.3_darwin_amd64.tar.gz
2222222222222222222222222222222222222222222222222222222222222222  kubectl-ray_1.2.3_darwin_arm64.tar.gz
3333333333333333333333333333333333333333333333333333333333333333  kubectl-ray_1.2.3_linux_amd64.tar.gz
4444444444444444444444444444444444444444444444444444444444444444  kubectl-ray_1.2.3_linux_arm64.tar.gz
5555555555555555555555555555555555555555555555555555555555555555  kubectl-ray_1.2.3_windows_amd64.zip
6666666666666666666666666666666666666666666666666666666666666666  kubectl-ray_1.2.3_windows_arm64.zip
`

func TestManifestFromChecksums(t *testing.T) {
	s, err := parseChecksums(strings.NewReader(sums))
	if err != nil {
		t.Fatal(err)
	}
	m, err := build("v1.2.3", "https://github.com/kubectl-ray/kubectl-ray", s, true)
	if err != nil {
		t.Fatal(err)
	}
	m.Checksums = "kubectl-ray_1.2.3_checksums.txt"
	var out bytes.Buffer
	if err := write(&out, m); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/ray-ops.yaml.golden"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("manifest differs from %s (go test -update to accept):\n%s", golden, out.String())
	}
}

// A platform without an archive in the checksums is an error naming it: no hash is ever invented.
func TestMissingArchiveIsAnError(t *testing.T) {
	s, _ := parseChecksums(strings.NewReader(strings.ReplaceAll(sums, "kubectl-ray_1.2.3_windows_arm64.zip", "other.zip")))
	_, err := build("v1.2.3", "https://example.invalid", s, false)
	if err == nil || !strings.Contains(err.Error(), "kubectl-ray_1.2.3_windows_arm64.zip") {
		t.Fatalf("want an error naming the windows/arm64 archive, got %v", err)
	}
	if _, err := parseChecksums(strings.NewReader("abc kubectl-ray.tar.gz\n")); err == nil {
		t.Fatal("a short hash was accepted")
	}
}
