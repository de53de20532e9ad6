package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platforms are the image's, in index order; .goreleaser.yaml builds both linux binaries.
var Platforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64", Variant: "v8"},
}

// OCI label and annotation keys (image-spec annotations.md).
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
	LabelLicenses = "org.opencontainers.image.licenses"
	refName       = "org.opencontainers.image.ref.name" // the tag, in the layout's index.json
)

// Release is what the image is stamped with: GoReleaser's dist/metadata.json.
type Release struct {
	Version string    // v-prefixed, as the binary reports it (ldflags add the v)
	Commit  string    // full SHA
	Date    time.Time // the commit's time: layer mtimes and the config's created
	Source  string    // repository URL
}

// Tag is the image tag: the binary's version string, so the two cannot disagree.
func (r Release) Tag() string { return r.Version }

// Labels go on every platform's config, and as annotations on the index.
func (r Release) Labels() map[string]string {
	return map[string]string{
		LabelSource:   r.Source,
		LabelVersion:  r.Version,
		LabelRevision: r.Commit,
		LabelCreated:  r.Date.UTC().Format(time.RFC3339),
		LabelTitle:    "kubectl-ray",
		LabelLicenses: "Apache-2.0",
	}
}

// readRelease reads dist/metadata.json.
func readRelease(dist, source string) (Release, error) {
	var m struct {
		Version string `json:"version"`
		Commit  string `json:"commit"`
		Date    string `json:"date"`
	}
	if err := readJSON(filepath.Join(dist, "metadata.json"), &m); err != nil {
		return Release{}, err
	}
	if m.Version == "" || len(m.Commit) != 40 {
		return Release{}, fmt.Errorf("%s/metadata.json has no version or full commit", dist)
	}
	date, err := commitDate(filepath.Dir(filepath.Clean(dist)), m.Commit)
	if err != nil {
		return Release{}, err
	}
	return Release{Version: "v" + m.Version, Commit: m.Commit, Date: date, Source: source}, nil
}

// commitDate is SOURCE_DATE_EPOCH when set (reproducible-builds.org), else the commit's time
// from git: metadata.json's date is when GoReleaser ran, which would change the digest on every
// build. The binaries' mtimes are the commit's too (mod_timestamp in .goreleaser.yaml).
func commitDate(dir, commit string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		out, err := exec.Command("git", "-C", dir, "show", "-s", "--format=%ct", commit).Output()
		if err != nil {
			return time.Time{}, fmt.Errorf("the time of commit %s (set SOURCE_DATE_EPOCH outside a git checkout): %w", commit, err)
		}
		s = strings.TrimSpace(string(out))
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("commit time %q is not seconds since the epoch", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// linuxBinaries finds the linux binaries GoReleaser built (dist/artifacts.json), by platform
// ("linux/amd64"), for each of platforms; paths are relative to the project directory, dist's
// parent.
func linuxBinaries(dist string, platforms []v1.Platform) (map[string]string, error) {
	var arts []struct {
		Type, Path, Goos, Goarch string
	}
	if err := readJSON(filepath.Join(dist, "artifacts.json"), &arts); err != nil {
		return nil, err
	}
	bins := map[string]string{}
	for _, a := range arts {
		if a.Type == "Binary" && a.Goos == "linux" {
			bins["linux/"+a.Goarch] = filepath.Join(filepath.Dir(filepath.Clean(dist)), a.Path)
		}
	}
	want := map[string]string{}
	for _, p := range platforms {
		k := p.OS + "/" + p.Architecture
		if bins[k] == "" {
			return nil, fmt.Errorf("%s/artifacts.json lists no %s binary", dist, k)
		}
		want[k] = bins[k]
	}
	return want, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// layerFrom wraps an already gzipped tar; it is compressed once here, not on every read.
func layerFrom(gz []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// BuildIndex makes the multi-platform image from nothing (empty.Image): no base image, so no
// registry is needed. bins maps "linux/amd64" and "linux/arm64" to the binaries' paths; a
// platform it lacks is left out (build -platform), in Platforms' order otherwise.
func BuildIndex(rel Release, bins map[string]string) (v1.ImageIndex, error) {
	base, err := gzipTar(baseEntries(), rel.Date)
	if err != nil {
		return nil, err
	}
	baseLayer, err := layerFrom(base)
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	built := 0
	for _, p := range Platforms {
		path, ok := bins[p.OS+"/"+p.Architecture]
		if !ok {
			continue
		}
		built++
		bin, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		img, err := platformImage(rel, p, baseLayer, bin)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", p.OS, p.Architecture, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img, Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	if built == 0 || built != len(bins) {
		return nil, fmt.Errorf("no image for some of %d binaries: the platforms are %s", len(bins), platformList(Platforms))
	}
	return mutate.Annotations(idx, rel.Labels()).(v1.ImageIndex), nil
}

// parsePlatforms reads build's -platform: a comma-separated subset of Platforms ("linux/amd64").
func parsePlatforms(s string) ([]v1.Platform, error) {
	if s == "" {
		return Platforms, nil
	}
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		found := false
		for _, p := range Platforms {
			if f == p.OS+"/"+p.Architecture {
				out, found = append(out, p), true
			}
		}
		if !found {
			return nil, fmt.Errorf("-platform %s: not one of %s", f, platformList(Platforms))
		}
	}
	return out, nil
}

func platformImage(rel Release, p v1.Platform, baseLayer v1.Layer, bin []byte) (v1.Image, error) {
	gz, err := gzipTar(binaryEntries(bin), rel.Date)
	if err != nil {
		return nil, err
	}
	binLayer, err := layerFrom(gz)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: rel.Date}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: baseLayer, History: v1.History{Created: created, CreatedBy: "hack/release/image: CA certificates, passwd, group, /home/nonroot, /tmp"}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: created, CreatedBy: "hack/release/image: " + BinaryPath + " " + rel.Version}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = created
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.User = User
	cf.Config.WorkingDir = HomeDir
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + HomeDir}
	cf.Config.Labels = rel.Labels()
	return mutate.ConfigFile(img, cf)
}

// WriteLayout writes the index as an OCI image layout at dir (replaced if it exists), tagged
// in index.json so `crane push DIR REF` and other OCI tools find it.
func WriteLayout(dir string, idx v1.ImageIndex, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refName: tag}))
}
