package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Want is what a release's image must carry.
type Want struct {
	Version string            // the tag and the binary's version, e.g. v1.2.3
	Commit  string            // the commit the binary reports (short); the revision label is its full SHA
	Source  string            // the source label
	Bins    map[string]string // optional: GoReleaser's binaries by platform; the image's must be the same bytes
}

// ReadLayout opens an OCI layout written by WriteLayout: one image index, tagged.
func ReadLayout(dir string) (v1.ImageIndex, string, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, "", err
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	if len(m.Manifests) != 1 || m.Manifests[0].MediaType != types.OCIImageIndex {
		return nil, "", fmt.Errorf("%s: want one OCI image index in index.json, found %d entries", dir, len(m.Manifests))
	}
	idx, err := root.ImageIndex(m.Manifests[0].Digest)
	return idx, m.Manifests[0].Annotations[refName], err
}

// Verify inspects the built image: both platforms, the config (entrypoint, non-root user,
// labels), the filesystem (exactly the expected files: no shell), and the binary in its own
// layers (the right ELF machine, static, the release's bytes). The binary for the host's
// platform is extracted and run. It returns one line per check made.
func Verify(idx v1.ImageIndex, want Want) ([]string, error) {
	var done []string
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if im.MediaType != types.OCIImageIndex {
		return nil, fmt.Errorf("index media type %s, want %s", im.MediaType, types.OCIImageIndex)
	}
	if err := checkLabels("index annotations", im.Annotations, want); err != nil {
		return nil, err
	}
	if len(im.Manifests) != len(Platforms) {
		return nil, fmt.Errorf("index has %d manifests, want %d (%s)", len(im.Manifests), len(Platforms), platformList(Platforms))
	}
	ran := false
	for i, p := range Platforms {
		d := im.Manifests[i]
		if d.Platform == nil || !d.Platform.Equals(p) {
			return nil, fmt.Errorf("index manifest %d is for %v, want %s", i, d.Platform, p.String())
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		bin, err := verifyImage(img, p, want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.String(), err)
		}
		done = append(done, fmt.Sprintf("%s: entrypoint %s, user %s, labels, CA certificates, no other files; the binary is the release's %s/%s build (static, CGO off)",
			p.String(), BinaryPath, User, p.OS, p.Architecture))
		if p.OS == runtime.GOOS && p.Architecture == runtime.GOARCH {
			out, err := runVersion(bin, want)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.String(), err)
			}
			done = append(done, fmt.Sprintf("%s: the binary from the image's layers says %q", p.String(), out))
			ran = true
		}
	}
	if !ran {
		done = append(done, fmt.Sprintf("no image for this machine's platform (%s/%s): no binary was run", runtime.GOOS, runtime.GOARCH))
	}
	return done, nil
}

func platformList(platforms []v1.Platform) string {
	var s []string
	for _, p := range platforms {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

var sha1Hex = regexp.MustCompile(`^[0-9a-f]{40}$`)

func checkLabels(what string, l map[string]string, want Want) error {
	switch {
	case l[LabelSource] != want.Source:
		return fmt.Errorf("%s: %s is %q, want %q", what, LabelSource, l[LabelSource], want.Source)
	case l[LabelVersion] != want.Version:
		return fmt.Errorf("%s: %s is %q, want %q", what, LabelVersion, l[LabelVersion], want.Version)
	case !sha1Hex.MatchString(l[LabelRevision]) || want.Commit == "" || !strings.HasPrefix(l[LabelRevision], want.Commit):
		return fmt.Errorf("%s: %s is %q, want the full SHA of commit %s", what, LabelRevision, l[LabelRevision], want.Commit)
	}
	return nil
}

// verifyImage checks one platform's image and returns its binary.
func verifyImage(img v1.Image, p v1.Platform, want Want) ([]byte, error) {
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	if mt != types.OCIManifestSchema1 {
		return nil, fmt.Errorf("manifest media type %s, want %s", mt, types.OCIManifestSchema1)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture || cf.Variant != p.Variant {
		return nil, fmt.Errorf("config is for %s/%s/%s", cf.OS, cf.Architecture, cf.Variant)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != BinaryPath || len(cf.Config.Cmd) != 0 {
		return nil, fmt.Errorf("entrypoint %q cmd %q, want [%s] and no cmd", cf.Config.Entrypoint, cf.Config.Cmd, BinaryPath)
	}
	uid, err := nonRootUID(cf.Config.User)
	if err != nil {
		return nil, err
	}
	if err := checkLabels("config labels", cf.Config.Labels, want); err != nil {
		return nil, err
	}
	files, err := regularFiles(img)
	if err != nil {
		return nil, err
	}
	if err := checkFiles(files, uid); err != nil {
		return nil, err
	}
	bin := files[BinaryPath].data
	if err := checkBinary(bin, p); err != nil {
		return nil, err
	}
	if path := want.Bins[p.OS+"/"+p.Architecture]; path != "" {
		rel, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if sha256.Sum256(rel) != sha256.Sum256(bin) {
			return nil, fmt.Errorf("%s in the image is not %s", BinaryPath, path)
		}
	}
	return bin, nil
}

// nonRootUID accepts only a numeric, non-zero user (and group): the kubelet enforces
// runAsNonRoot from the image's user only when it is numeric.
func nonRootUID(user string) (int, error) {
	u, g, _ := strings.Cut(user, ":")
	uid, err := strconv.Atoi(u)
	if err != nil || uid == 0 {
		return 0, fmt.Errorf("user %q is not a numeric non-root user", user)
	}
	if gid, err := strconv.Atoi(g); g != "" && (err != nil || gid == 0) {
		return 0, fmt.Errorf("user %q: the group is not a numeric non-root group", user)
	}
	return uid, nil
}

type file struct {
	mode int64
	data []byte
}

// regularFiles flattens the image's layers as a runtime would and returns every file; a
// symlink, device or hard link is an error (the image has none).
func regularFiles(img v1.Image) (map[string]file, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]file{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name := "/" + strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files[name] = file{mode: h.Mode, data: b}
		default:
			return nil, fmt.Errorf("%s: unexpected entry type %q", name, h.Typeflag)
		}
	}
}

// checkFiles: exactly the expected regular files, so there is no shell nor anything else.
func checkFiles(files map[string]file, uid int) error {
	expected := []string{BinaryPath, CertsPath, GroupPath, PasswdPath}
	for _, f := range expected {
		if _, ok := files[f]; !ok {
			return fmt.Errorf("no %s in the image", f)
		}
	}
	if len(files) != len(expected) {
		var extra []string
		for f := range files {
			if !contains(expected, f) {
				extra = append(extra, f)
			}
		}
		return fmt.Errorf("unexpected files in the image: %s", strings.Join(extra, ", "))
	}
	if files[BinaryPath].mode&0o111 == 0 {
		return fmt.Errorf("%s is not executable (mode %o)", BinaryPath, files[BinaryPath].mode)
	}
	n, err := countCerts(files[CertsPath].data)
	if err != nil {
		return fmt.Errorf("%s: %w", CertsPath, err)
	}
	if n < 100 { // Mozilla's store holds about 150; a handful means the bundle went wrong
		return fmt.Errorf("%s holds %d certificates", CertsPath, n)
	}
	if !bytes.Contains(files[PasswdPath].data, fmt.Appendf(nil, ":x:%d:", uid)) {
		return fmt.Errorf("%s has no entry for uid %d", PasswdPath, uid)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkBinary: a static Linux ELF for the platform, built by Go with CGO off.
func checkBinary(bin []byte, p v1.Platform) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("%s is not an ELF binary: %w", BinaryPath, err)
	}
	if f.Machine != elfMachine[p.Architecture] {
		return fmt.Errorf("%s is for %s, want %s", BinaryPath, f.Machine, elfMachine[p.Architecture])
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; the image has no libc", BinaryPath)
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("%s: %w", BinaryPath, err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != p.OS || settings["GOARCH"] != p.Architecture || settings["CGO_ENABLED"] != "0" {
		return fmt.Errorf("%s was built with GOOS=%s GOARCH=%s CGO_ENABLED=%s", BinaryPath, settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"])
	}
	return nil
}

// runVersion runs the image's binary, written to a temporary file, as `version --client`.
func runVersion(bin []byte, want Want) (string, error) {
	dir, err := os.MkdirTemp("", "image-binary")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kubectl-ray")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		return "", err
	}
	out, err := exec.Command(path, "version", "--client").Output()
	if err != nil {
		return "", fmt.Errorf("version --client: %w", err)
	}
	text := strings.TrimSpace(string(out))
	if text != "Client Version: "+want.Version {
		return "", fmt.Errorf("version --client says %q, want %q", text, "Client Version: "+want.Version)
	}
	out, err = exec.Command(path, "version", "--client", "-o", "json").Output()
	if err != nil {
		return "", fmt.Errorf("version --client -o json: %w", err)
	}
	var info struct {
		ClientVersion struct{ Version, Commit, Platform string } `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("version --client -o json: %w", err)
	}
	if cv := info.ClientVersion; cv.Version != want.Version || cv.Commit != want.Commit {
		return "", fmt.Errorf("version --client -o json says version %q commit %q, want %q %q", cv.Version, cv.Commit, want.Version, want.Commit)
	}
	return fmt.Sprintf("%s (commit %s)", text, info.ClientVersion.Commit), nil
}
