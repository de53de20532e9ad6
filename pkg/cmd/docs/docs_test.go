package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The checked-in reference must be exactly what the command tree renders: a flag or command added,
// renamed or re-described without `make docs` fails here.
func TestReferenceIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "docs", "reference")
	want := Render(Tree())
	onDisk, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, path := range onDisk {
		name := filepath.Base(path)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[name]
		switch {
		case !ok:
			stale = append(stale, name+" (no such command any more)")
		case !bytes.Equal(got, w):
			stale = append(stale, name+" (differs)")
		}
	}
	for name := range want {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			stale = append(stale, name+" (missing)")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("docs/reference is stale; run `make docs` and commit the result:\n  %s", strings.Join(stale, "\n  "))
	}
}

// Every runnable command gets a page that shows its usage line; hidden ones and cobra's internals
// do not.
func TestRenderCoversTheTree(t *testing.T) {
	pages := Render(Tree())
	for _, name := range []string{"index.md", "kubectl_ray.md", "kubectl_ray_version.md", "kubectl_ray_completion_bash.md"} {
		if _, ok := pages[name]; !ok {
			t.Errorf("no page %s", name)
		}
	}
	for name := range pages {
		if strings.Contains(name, "__complete") || strings.Contains(name, "_help") {
			t.Errorf("page %s is for an internal command", name)
		}
	}
	if !bytes.Contains(pages["kubectl_ray_version.md"], []byte("```\nkubectl ray version [flags]\n```")) {
		t.Errorf("version page lacks its usage line:\n%s", pages["kubectl_ray_version.md"])
	}
	// Defaults print quoted ("/root/.kube/cache"); prose may well contain /proc/1/root.
	home, _ := os.UserHomeDir()
	for name, p := range pages {
		if home != "" && bytes.Contains(p, []byte(`"`+home)) {
			t.Errorf("%s contains the home directory %s", name, home)
		}
	}
}
