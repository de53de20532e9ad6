package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive is unpacked once, only with the pinned sha256, and never outside its directory.
func TestUnpackUpstream(t *testing.T) {
	const v = "v0.0.0-test"
	archive := tarGz(t, map[string]string{
		"ray-operator/go.mod":     "module github.com/ray-project/kuberay/ray-operator\n",
		"../../escaped":           "out",
		"ray-operator/config/x.y": "crd",
	})
	upstream := t.TempDir()
	if err := os.WriteFile(filepath.Join(upstream, upstreamArchiveName(v)), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(UpstreamEnv, upstream)
	cfg := Config{Cache: t.TempDir(), Repo: t.TempDir()}

	upstreamArchives[v] = strings.Repeat("0", 64)
	defer delete(upstreamArchives, v)
	if _, err := cfg.unpackUpstream(v); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("a wrong sha256 must be refused, got %v", err)
	}

	sum := sha256.Sum256(archive)
	upstreamArchives[v] = hex.EncodeToString(sum[:])
	dir, err := cfg.unpackUpstream(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("the module's go.mod is not where the build looks: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Cache, "escaped")); err == nil {
		t.Fatal("a path with .. was written outside the unpack directory")
	}
	if _, err := os.Stat(filepath.Join(cfg.Cache, "upstream", "kuberay-"+v, "escaped")); err != nil {
		t.Fatalf("a path with .. is kept inside the unpack directory: %v", err)
	}
	// Once unpacked, the archive is not needed again.
	if err := os.Remove(filepath.Join(upstream, upstreamArchiveName(v))); err != nil {
		t.Fatal(err)
	}
	if again, err := cfg.unpackUpstream(v); err != nil || again != dir {
		t.Fatalf("second unpack: %q, %v; want the cached %q", again, err, dir)
	}
}

// Without the environment variable, the archive is found in shared/upstream above the checkout;
// where there is none, the error says how to point at it.
func TestFindUpstream(t *testing.T) {
	t.Setenv(UpstreamEnv, "")
	root := t.TempDir()
	repo := filepath.Join(root, "clones", "kubectl-ray")
	shared := filepath.Join(root, "shared", "upstream")
	for _, d := range []string{repo, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	name := upstreamArchiveName(OperatorV170)
	cfg := Config{Repo: repo}
	if _, err := cfg.findUpstream(name); err == nil || !strings.Contains(err.Error(), UpstreamEnv) {
		t.Fatalf("no archive: want an error naming %s, got %v", UpstreamEnv, err)
	}
	if err := os.WriteFile(filepath.Join(shared, name), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := cfg.findUpstream(name)
	if err != nil || got != filepath.Join(shared, name) {
		t.Fatalf("findUpstream = %q, %v; want %q", got, err, filepath.Join(shared, name))
	}
}

// A clone of a local checkout finds the archive above the checkout it was cloned from.
func TestFindUpstreamThroughLocalOrigin(t *testing.T) {
	t.Setenv(UpstreamEnv, "")
	root := t.TempDir()
	origin := filepath.Join(root, "main")
	shared := filepath.Join(root, "shared", "upstream")
	for _, d := range []string{origin, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	name := upstreamArchiveName(OperatorV170)
	if err := os.WriteFile(filepath.Join(shared, name), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "ci")
	for _, args := range [][]string{{"init", "-q", origin}, {"-C", origin, "commit", "-q", "--allow-empty", "-m", "x"}, {"clone", "-q", origin, clone}} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	got, err := Config{Repo: clone}.findUpstream(name)
	if err != nil || got != filepath.Join(shared, name) {
		t.Fatalf("findUpstream from a clone = %q, %v; want %q", got, err, filepath.Join(shared, name))
	}
}
