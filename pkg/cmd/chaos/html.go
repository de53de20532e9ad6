package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// withHTML writes the --report-html page, if asked, and returns the run's verdict. The run
// checked the path first, so a failure here is rare (the directory went away, the disk is full): the
// run happened, so its verdict keeps precedence, and a passing run still fails.
func withHTML(f *cmdutil.Factory, path string, verdict error, write func(io.Writer) error) error {
	if path == "" {
		return verdict
	}
	err := writeFile(path, write)
	if err == nil {
		return verdict
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "error: cannot write --report-html %s: %v; the report above is complete\n", path, err)
	if verdict == nil {
		verdict = exit.Silent{Code: exit.API}
	}
	return verdict
}

// writeFile writes a report file, every byte through the redactor, as -o's writer does: the report
// quotes probe errors and Events, which can echo a credential.
func writeFile(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(redact.New().Bytes(b.Bytes())); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reportHTMLWritable is the usage error of a --report-html path that cannot be written, found at
// the start of a run, before anything is read or changed (Validate stays a pure function of the
// flags).
func reportHTMLWritable(path string) error {
	if err := checkWritable(path); err != nil {
		return exit.Usagef("--report-html %s: %v; give a file in a directory you can write", path, err)
	}
	return nil
}

// checkWritable makes sure a report file can be written before anything is changed: a bad path
// found after the run would turn a finished run into an error. It creates and removes a
// temporary file next to path, so it leaves nothing behind. "" is fine (no file asked).
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubectl-ray-check-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err // the path is in the message already
		}
		return err
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}
