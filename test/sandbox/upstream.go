package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// operatorModule is the Go module of KubeRay's operator.
const operatorModule = "github.com/ray-project/kuberay/ray-operator"

// upstreamArchives are the release source archives the sandbox may build an operator from when
// the module proxy refuses its module (a proxy can refuse a version it serves elsewhere). Each is
// KubeRay's ray-operator/ directory at the release tag (`git archive --prefix=ray-operator/
// vX:ray-operator | gzip -n`), pinned by its sha256.
var upstreamArchives = map[string]string{
	OperatorV170: "47992007cd4a63292a1942564bc0a48e0f086693c25d3c434f3cbd27609c9b41",
}

// UpstreamEnv names a directory holding the archives; without it the sandbox looks for
// shared/upstream beside the checkout or above it.
const UpstreamEnv = "KUBECTL_RAY_UPSTREAM"

func upstreamArchiveName(v string) string { return "kuberay-ray-operator-" + v + ".tar.gz" }

// operatorSource is the directory of the ray-operator module of version v: the module cache's,
// downloaded through the wrapper module, or, where the module proxy refuses it and an archive is
// pinned for v, the archive unpacked into the cache. fromArchive says which.
func (b *builder) operatorSource(ctx context.Context, v string) (dir string, fromArchive bool, err error) {
	dir, err = b.moduleDir(ctx, "kuberay-"+v, operatorModule)
	if err == nil {
		return dir, false, nil
	}
	dir, uerr := b.cfg.unpackUpstream(v)
	if uerr != nil {
		return "", false, fmt.Errorf("%v; and no source archive to fall back on: %v", err, uerr)
	}
	return dir, true, nil
}

// buildOperator builds KubeRay's operator v into out: from the wrapper module when the module
// proxy serves it, else from the release's source archive with its own go.mod, every dependency
// from the proxy.
func (b *builder) buildOperator(ctx context.Context, v, out string) error {
	dir, fromArchive, err := b.operatorSource(ctx, v)
	if err != nil {
		return err
	}
	if !fromArchive {
		return b.goBuild(ctx, "kuberay-"+v, operatorModule, out)
	}
	return goBuildIn(ctx, dir, ".", out, "-mod=mod")
}

// unpackUpstream unpacks the pinned archive of operator v into the cache once, after checking its
// sha256, and returns the directory of its ray-operator module.
func (c Config) unpackUpstream(v string) (string, error) {
	if _, pinned := upstreamArchives[v]; !pinned {
		return "", fmt.Errorf("no source archive of KubeRay %s is pinned in the sandbox", v)
	}
	dest := filepath.Join(c.Cache, "upstream", "kuberay-"+v)
	mod := filepath.Join(dest, "ray-operator")
	if _, err := os.Stat(filepath.Join(mod, "go.mod")); err == nil {
		return mod, nil
	}
	archive, err := c.findUpstream(upstreamArchiveName(v))
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	if got, want := hex.EncodeToString(sum[:]), upstreamArchives[v]; got != want {
		return "", fmt.Errorf("%s has sha256 %s, want %s: replace it with the release's archive", archive, got, want)
	}
	tmp := dest + ".tmp"
	os.RemoveAll(tmp)
	if err := untarGz(data, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("unpacking %s: %w", archive, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return "", err
	}
	return mod, nil
}

// findUpstream finds an archive in $KUBECTL_RAY_UPSTREAM, else in shared/upstream of the
// checkout's parent directories or, for a clone of a local checkout (CI's), of that checkout's:
// a workplace keeps it beside its clones.
func (c Config) findUpstream(name string) (string, error) {
	if d := os.Getenv(UpstreamEnv); d != "" {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", UpstreamEnv, d, err)
		}
		return p, nil
	}
	for _, start := range []string{c.Repo, localOrigin(c.Repo)} {
		if start == "" {
			continue
		}
		for d := start; ; d = filepath.Dir(d) {
			p := filepath.Join(d, "shared", "upstream", name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("%s is not in shared/upstream above %s: set %s to the directory that holds it", name, c.Repo, UpstreamEnv)
}

// localOrigin is the directory the checkout was cloned from when that is a local path, else "".
func localOrigin(repo string) string {
	out, err := exec.Command("git", "-C", repo, "config", "--get", "remote.origin.url").Output()
	if err != nil {
		return ""
	}
	url := strings.TrimPrefix(strings.TrimSpace(string(out)), "file://")
	if !filepath.IsAbs(url) {
		return ""
	}
	return url
}

// untarGz writes the regular files and directories of a gzipped tar into dir, refusing any path
// that would leave it.
func untarGz(data []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/" + h.Name)[1:])
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// goBuildIn builds pkg inside module directory dir into out, atomically (see goBuild).
func goBuildIn(ctx context.Context, dir, pkg, out string, flags ...string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build", "-o", tmp}, flags...), pkg)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("go build %s in %s: %v: %s", pkg, dir, err, lastLines(stderr.String(), 5))
	}
	return os.Rename(tmp, out)
}

// UpstreamOperator is the directory of KubeRay's ray-operator module of release v unpacked from
// its pinned source archive, for the tools that read a release's CRDs where the module proxy
// refuses it (hack/crdfields).
func UpstreamOperator(v string) (string, error) {
	var c Config
	if err := c.defaults(); err != nil {
		return "", err
	}
	return c.unpackUpstream(v)
}
