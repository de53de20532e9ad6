// Package golden compares test output with a file under testdata, and rewrites the file when
// the test runs with -update (go test ./pkg/x -update; review the diff before committing).
//
// It registers the -update flag for every test binary that imports it: a test package that
// imports golden must not define its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// Assert fails t unless got equals the file at path byte for byte; with -update it writes got
// to path instead.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it; review the diff)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
