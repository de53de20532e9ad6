package testio

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// Untar reads every file of a gzipped tar archive (a bundle): name -> bytes, and the names in
// archive order.
func Untar(t testing.TB, path string) (map[string][]byte, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	var order []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, order
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
		order = append(order, hdr.Name)
	}
}
