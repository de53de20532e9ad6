package bundle

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// fullDisk accepts n bytes, then fails as a full disk does.
type fullDisk struct{ n int }

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.n {
		return 0, &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	}
	d.n -= len(p)
	return len(p), nil
}

func TestWriteFullDiskLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tar.gz")
	old := disk
	disk = func(*os.File) io.Writer { return &fullDisk{n: 64} }
	defer func() { disk = old }()
	big := []artifact.File{{Path: "logs/x.log", Data: []byte(strings.Repeat("random-ish line 0123456789\n", 1<<14))}}
	_, err := Write(path, time.Now(), []byte("# index\n"), big, nil, redact.New(), false)
	if err == nil || fault.KindOf(err) != fault.API || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "no space left on device; nothing was left under that name") {
		t.Fatalf("err = %v, want one line saying the disk is full", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestWriteOverwritesOnlyWithForce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tar.gz")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := redact.New()
	if err := CheckOutput(path, false); fault.KindOf(err) != fault.Invalid {
		t.Errorf("CheckOutput of an existing file: %v", err)
	}
	// Written meanwhile (after CheckOutput passed): still not replaced without force.
	if _, err := Write(path, time.Now(), []byte("i"), nil, nil, id, false); err == nil {
		t.Errorf("Write replaced an existing file without force")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the file was changed: %q", b)
	}
	if w, err := Write(path, time.Now(), []byte("i"), nil, nil, id, true); err != nil || w.Files != 1 {
		t.Errorf("force: %v %+v", err, w)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	var pe *os.PathError
	if err := CheckOutput(filepath.Join(dir, "nope", "b.tar.gz"), false); err == nil || errors.As(err, &pe) {
		t.Errorf("a missing directory: %v", err)
	}
}
