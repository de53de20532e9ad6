package bundle

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/errgroup"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// SetOutput and SetForce are the settings the archive's errors name.
const (
	SetOutput fault.Field = "output"
	SetForce  fault.Field = "force"
)

// RootDir is the directory the archive's files sit under: the archive's own name without its
// extension, so that unpacking two bundles side by side keeps them apart.
func RootDir(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".tar.gz", ".tgz", ".tar"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

// CheckOutput refuses an output path that exists (without force) or whose directory does not;
// nothing is read from the cluster before it passes.
func CheckOutput(path string, force bool) error {
	if path == "" {
		return fault.Errorf(fault.Invalid, "say where to write the bundle: %s FILE.tar.gz", SetOutput)
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fault.Errorf(fault.Invalid, "%s is a directory; name the archive to write: %s %s/bundle.tar.gz", path, SetOutput, strings.TrimSuffix(path, "/"))
		}
		if !force {
			return fault.Errorf(fault.Invalid, "%s exists; pick another %s, or pass %s to overwrite it", path, SetOutput, SetForce)
		}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fault.Errorf(fault.Invalid, "cannot write %s: the directory %s does not exist; create it or pick another %s", path, dir, SetOutput)
	}
	return nil
}

// Written is what Write wrote.
type Written struct {
	Files int
	Bytes int64
}

// Write writes the archive: the index first, then every file, each one through the redactor (the
// text pass). What any file shows by its shape (a token a log prints after "Bearer") is learned
// first, so that it is redacted in every file where it stands bare too; the spooled files were
// learned as the Stream rendered them (its Secrets, which r must know). It writes a temporary
// file beside path and renames it to path only once the whole archive is on disk, so a failure
// (a full disk) leaves nothing under path, and an existing path is replaced only with force.
func Write(path string, now time.Time, index []byte, files []artifact.File, spooled []Spooled, r *redact.Redactor, force bool) (Written, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return Written{}, writeError(path, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	root := RootDir(path)
	gz := gzip.NewWriter(disk(tmp))
	tw := tar.NewWriter(gz)
	all := entries(index, files, spooled)
	// Learning reads every byte, gitleaks' rules the most of it: the files are read on every
	// core, and the archive is written in order after.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, e := range all {
		if e.packed == nil {
			g.Go(func() error {
				if isJSON(e.path) {
					r.LearnJSON(string(e.data))
				} else {
					r.Learn(string(e.data))
				}
				return nil
			})
		}
	}
	_ = g.Wait()
	err = redacted(all, r, func(name string, data []byte) error {
		hdr := &tar.Header{Name: root + "/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	})
	if err != nil {
		return Written{}, writeError(path, err)
	}
	if err := tw.Close(); err != nil {
		return Written{}, writeError(path, err)
	}
	if err := gz.Close(); err != nil {
		return Written{}, writeError(path, err)
	}
	if err := tmp.Sync(); err != nil {
		return Written{}, writeError(path, err)
	}
	size, _ := tmp.Seek(0, io.SeekCurrent)
	if err := tmp.Close(); err != nil {
		return Written{}, writeError(path, err)
	}
	if _, err := os.Stat(path); err == nil && !force {
		// Someone wrote it while the bundle was collected.
		return Written{}, fault.Errorf(fault.Invalid, "%s appeared while the bundle was collected; pick another %s, or pass %s to overwrite it", path, SetOutput, SetForce)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return Written{}, writeError(path, err)
	}
	ok = true
	return Written{Files: len(all), Bytes: size}, nil
}

// disk is what the archive's bytes are written through: the file itself; a test plays a full
// disk there.
var disk = func(f *os.File) io.Writer { return f }

func writeError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fault.Errorf(fault.API, "cannot write the bundle %s: %v; nothing was left under that name (free some space or pick another %s)", path, err, SetOutput)
}
