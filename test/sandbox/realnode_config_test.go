package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real node's configuration keeps every pull and DNS query on this machine, and carries the
// workarounds real-node.md found.
func TestRealNodeConfigs(t *testing.T) {
	p := realNodePaths{root: t.TempDir()}
	if err := p.writeConfigs(10250, 10248); err != nil {
		t.Fatal(err)
	}
	for _, r := range registries {
		b, err := os.ReadFile(filepath.Join(p.certsD(), r, "hosts.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `server = "http://127.0.0.1:9"`) || strings.Count(string(b), "http") != 2 {
			t.Errorf("%s/hosts.toml does not point only at the dead loopback registry:\n%s", r, b)
		}
	}
	read := func(f string) string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ctrd := read(p.containerdConfig())
	for _, want := range []string{"restrict_oom_score_adj = true", `address = "/run/containerd/containerd.sock"`,
		`config_path = "` + p.certsD() + `"`, `sandbox_image = "` + PauseImage + `"`, `root = "` + p.containerdRoot() + `"`} {
		if !strings.Contains(ctrd, want) {
			t.Errorf("containerd.toml lacks %s", want)
		}
	}
	if got := read(p.resolvConf()); got != "nameserver 127.0.0.1\n" {
		t.Errorf("resolv.conf = %q", got)
	}
	kl := read(p.kubeletConfig())
	for _, want := range []string{"address: 127.0.0.1\n", "port: 10250\n", "makeIPTablesUtilChains: false", "clusterDNS: [127.0.0.1]",
		"nodefs.available: 300Mi", "evictionPressureTransitionPeriod: 30s", "imageMinimumGCAge: 720h", "cgroupDriver: cgroupfs", "failCgroupV1: false"} {
		if !strings.Contains(kl, want) {
			t.Errorf("kubelet.yaml lacks %q", want)
		}
	}
	for _, path := range []string{p.containerdConfig(), p.kubeletConfig(), p.resolvConf()} {
		if !strings.HasPrefix(path, p.root) {
			t.Errorf("%s is outside the node's directory", path)
		}
	}
}

// The source stamp changes when a stand-in's source does, so its cached image is rebuilt.
func TestRealNodeSourceStamp(t *testing.T) {
	repo := t.TempDir()
	write := func(rel, data string) {
		f := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("test/play/cmd/ray/main.go", "package main // one")
	write("test/sandbox/realnode_images.go", "package sandbox")
	a := realNodeSourceStamp(repo)
	if len(a) != 12 || a != realNodeSourceStamp(repo) {
		t.Fatalf("stamp %q is not 12 stable hex digits", a)
	}
	write("test/play/cmd/ray/main.go", "package main // two")
	if realNodeSourceStamp(repo) == a {
		t.Error("the stamp did not change with the stand-in's source")
	}
}
