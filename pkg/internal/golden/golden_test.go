package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestAssert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, got string
		fail      bool
	}{
		{path, "same\n", false},
		{path, "same", true}, // byte for byte: a missing newline is a difference
		{path, "other\n", true},
		{filepath.Join(t.TempDir(), "missing.golden"), "x", true},
	} {
		r := &recorder{TB: t}
		Assert(r, tc.path, []byte(tc.got))
		if r.failed != tc.fail {
			t.Errorf("Assert(%q, %q) failed = %v, want %v", tc.path, tc.got, r.failed, tc.fail)
		}
	}
}

func TestUpdateRewrites(t *testing.T) {
	*update = true
	defer func() { *update = false }()
	path := filepath.Join(t.TempDir(), "sub", "new.golden")
	r := &recorder{TB: t}
	Assert(r, path, []byte("fresh\n"))
	data, err := os.ReadFile(path)
	if r.failed || err != nil || string(data) != "fresh\n" {
		t.Fatalf("with -update: failed %v, file %q, err %v", r.failed, data, err)
	}
}
