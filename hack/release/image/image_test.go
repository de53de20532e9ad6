package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

const (
	testVersion = "v1.2.3"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
)

var testRelease = Release{
	Version: testVersion, Commit: testCommit, Source: Source,
	Date: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
}

// fakeBinaries builds testdata/fakebin for both platforms, stamped like a release.
func fakeBinaries(t *testing.T, commit string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, p := range Platforms {
		out := filepath.Join(dir, p.Architecture, "kubectl-ray")
		cmd := exec.Command("go", "build", "-trimpath", "-o", out,
			"-ldflags", "-s -w -X main.version="+testVersion+" -X main.commit="+commit, "./testdata/fakebin")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", p.String(), err, b)
		}
		bins[p.OS+"/"+p.Architecture] = out
	}
	return bins
}

func want(bins map[string]string) Want {
	return Want{Version: testVersion, Commit: testCommit[:7], Source: Source, Bins: bins}
}

func TestBuildWriteReadVerify(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("runs a linux/amd64 or linux/arm64 binary from the image")
	}
	bins := fakeBinaries(t, testCommit[:7])
	idx, err := BuildIndex(testRelease, bins)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	if err := WriteLayout(dir, idx, testRelease.Tag()); err != nil {
		t.Fatal(err)
	}
	read, tag, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tag != testVersion {
		t.Errorf("layout tag %q, want %q", tag, testVersion)
	}
	done, err := Verify(read, want(bins))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(done, "\n"); !strings.Contains(got, `says "Client Version: v1.2.3 (commit 0123456)"`) {
		t.Errorf("the image's binary was not run:\n%s", got)
	}

	// Reproducible: the same binaries and commit give the same digest.
	again, err := BuildIndex(testRelease, bins)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := read.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same release differ: %s, %s", d1, d2)
	}

	// What Verify must refuse.
	for name, w := range map[string]Want{
		"other version":  {Version: "v1.2.4", Commit: testCommit[:7], Source: Source},
		"other commit":   {Version: testVersion, Commit: "fedcba9", Source: Source},
		"other source":   {Version: testVersion, Commit: testCommit[:7], Source: "https://example.com/x"},
		"other binaries": {Version: testVersion, Commit: testCommit[:7], Source: Source, Bins: map[string]string{"linux/amd64": bins["linux/arm64"]}},
	} {
		if _, err := Verify(read, w); err == nil {
			t.Errorf("%s: Verify accepted the image", name)
		}
	}
}

// The binary reports a commit other than the image's revision label: the run catches it.
func TestVerifyRunsTheBinary(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("runs the linux/amd64 binary")
	}
	bins := fakeBinaries(t, "fedcba9")
	idx, err := BuildIndex(testRelease, bins)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(idx, want(bins)); err == nil || !strings.Contains(err.Error(), `commit "fedcba9"`) {
		t.Errorf("Verify = %v, want the binary's commit refused", err)
	}
}

func TestVerifyRefusesOtherImages(t *testing.T) {
	bins := fakeBinaries(t, testCommit[:7])
	good, err := BuildIndex(testRelease, bins)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := good.IndexManifest()
	amd64, _ := good.Image(im.Manifests[0].Digest)
	arm64, _ := good.Image(im.Manifests[1].Digest)
	withConfigFile := func(img v1.Image, edit func(*v1.ConfigFile)) v1.Image {
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		edit(cf)
		out, err := mutate.ConfigFile(img, cf)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	withConfig := func(img v1.Image, edit func(*v1.Config)) v1.Image {
		return withConfigFile(img, func(cf *v1.ConfigFile) { edit(&cf.Config) })
	}
	shell, err := gzipTar([]entry{{path: "/bin", dir: true, mode: 0o755}, {path: "/bin/sh", mode: 0o755, data: []byte("#!")}}, testRelease.Date)
	if err != nil {
		t.Fatal(err)
	}
	shellLayer, _ := layerFrom(shell)
	withShell, err := mutate.AppendLayers(amd64, shellLayer)
	if err != nil {
		t.Fatal(err)
	}
	// index lists the images under Platforms' descriptors, in order, whatever they hold.
	index := func(imgs ...v1.Image) v1.ImageIndex {
		idx := mutate.IndexMediaType(empty.Index, im.MediaType)
		for i, img := range imgs {
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &Platforms[i]}})
		}
		return mutate.Annotations(idx, testRelease.Labels()).(v1.ImageIndex)
	}
	swapped := mutate.IndexMediaType(empty.Index, im.MediaType)
	swapped = mutate.AppendManifests(swapped,
		mutate.IndexAddendum{Add: arm64, Descriptor: v1.Descriptor{Platform: &Platforms[1]}},
		mutate.IndexAddendum{Add: amd64, Descriptor: v1.Descriptor{Platform: &Platforms[0]}})
	cases := map[string]struct {
		idx  v1.ImageIndex
		want string
	}{
		"root user":     {index(withConfig(amd64, func(c *v1.Config) { c.User = "0" }), arm64), "not a numeric non-root user"},
		"named user":    {index(withConfig(amd64, func(c *v1.Config) { c.User = "nonroot" }), arm64), "not a numeric non-root user"},
		"no user":       {index(withConfig(amd64, func(c *v1.Config) { c.User = "" }), arm64), "not a numeric non-root user"},
		"root group":    {index(withConfig(amd64, func(c *v1.Config) { c.User = "65532:0" }), arm64), "not a numeric non-root group"},
		"a shell":       {index(withShell, arm64), "unexpected files in the image: /bin/sh"},
		"other command": {index(withConfig(amd64, func(c *v1.Config) { c.Entrypoint = []string{"/bin/sh"} }), arm64), "entrypoint"},
		"a cmd":         {index(withConfig(amd64, func(c *v1.Config) { c.Cmd = []string{"version"} }), arm64), "no cmd"},
		"no labels":     {index(withConfig(amd64, func(c *v1.Config) { c.Labels = nil }), arm64), "config labels"},
		"one platform":  {index(amd64), "want 2"},
		"swapped order": {mutate.Annotations(swapped, testRelease.Labels()).(v1.ImageIndex), "index manifest 0 is for linux/arm64/v8"},
		"mislabelled":   {index(arm64, arm64), "config is for linux/arm64/v8"},
		"arm64 binary as amd64": {
			index(withConfigFile(arm64, func(cf *v1.ConfigFile) { cf.Architecture, cf.Variant = "amd64", "" }), arm64),
			"is for EM_AARCH64, want EM_X86_64",
		},
	}
	for name, c := range cases {
		_, err := Verify(c.idx, want(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Verify = %v, want an error with %q", name, err, c.want)
		}
	}
}

func TestCACertificates(t *testing.T) {
	pem, n := CACertificates()
	got, err := countCerts(pem)
	if err != nil || got != n || n < 100 {
		t.Errorf("CACertificates: %d certificates written, %d parsed (%v); want the same and over 100", n, got, err)
	}
}

// build -platform makes an index of only the platforms asked for (a test on one machine); a
// platform outside Platforms is refused by name, and Verify, a release's check, refuses the
// partial index.
func TestBuildOnePlatform(t *testing.T) {
	bins := fakeBinaries(t, testCommit[:7])
	only, err := parsePlatforms("linux/amd64")
	if err != nil || len(only) != 1 || only[0].Architecture != "amd64" {
		t.Fatalf("parsePlatforms: %v, %v", only, err)
	}
	idx, err := BuildIndex(testRelease, map[string]string{"linux/amd64": bins["linux/amd64"]})
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform.Architecture != "amd64" {
		t.Fatalf("index manifests: %+v", im.Manifests)
	}
	if _, err := Verify(idx, want(bins)); err == nil || !strings.Contains(err.Error(), "want 2") {
		t.Errorf("Verify of a one-platform index: %v, want it refused", err)
	}
	if _, err := parsePlatforms("linux/s390x"); err == nil || !strings.Contains(err.Error(), "linux/s390x") {
		t.Errorf("parsePlatforms(linux/s390x): %v", err)
	}
	if _, err := BuildIndex(testRelease, map[string]string{"linux/s390x": bins["linux/amd64"]}); err == nil {
		t.Error("BuildIndex with no known platform: no error")
	}
}
