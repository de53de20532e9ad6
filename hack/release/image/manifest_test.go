package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const checkedIn = "../../../docs/deploy/watchdog.yaml"

var (
	digestA = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	digestB = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
)

// docs/deploy/watchdog.yaml names the release's repository and a release tag, and is exactly
// what render makes of itself: nothing but the image line is rendered.
func TestCheckedInManifest(t *testing.T) {
	b, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	img, err := ManifestImage(b)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(Repository) + `:(v\d+\.\d+\.\d+(-[\w.]+)?)$`).FindStringSubmatch(img)
	if m == nil {
		t.Fatalf("%s runs %q, want %s:vX.Y.Z", checkedIn, img, Repository)
	}
	ref, err := Reference(Repository, m[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Render(b, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("rendering %s for %s changes it", checkedIn, m[1])
	}
	if _, err := CheckManifest(b, Repository, m[1], digestA, false); err != nil {
		t.Error(err)
	}
}

func TestRender(t *testing.T) {
	b, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		repo, tag string
		digest    *v1.Hash
		want      string
	}{
		{Repository, "v1.2.3", nil, Repository + ":v1.2.3"},
		{Repository, "v1.2.3", &digestA, Repository + ":v1.2.3@" + digestA.String()},
		{"registry.example.com:5000/platform/kubectl-ray", "v1.2.3", nil, "registry.example.com:5000/platform/kubectl-ray:v1.2.3"},
	} {
		ref, err := Reference(c.repo, c.tag, c.digest)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Render(b, ref)
		if err != nil {
			t.Fatal(err)
		}
		if img, err := ManifestImage(out); err != nil || img != c.want {
			t.Errorf("rendered image %q (%v), want %q", img, err, c.want)
		}
		// Only the image line changes.
		if strings.Count(string(out), "\n") != strings.Count(string(b), "\n") {
			t.Errorf("rendering %s changed the line count", c.want)
		}
	}
	for name, bad := range map[string]struct {
		manifest []byte
		ref      string
	}{
		"no image line":   {bytes.ReplaceAll(b, []byte("image:"), []byte("imagex:")), Repository + ":v1"},
		"two image lines": {append(append([]byte{}, b...), []byte("---\nx:\n  image: a\n")...), Repository + ":v1"},
		"a command": {bytes.Replace(b, []byte("          image:"), []byte("          command: [sh]\n          image:"), 1),
			Repository + ":v1"},
	} {
		if _, err := Render(bad.manifest, bad.ref); err == nil {
			t.Errorf("%s: Render accepted it", name)
		}
	}
	for _, bad := range []string{"UPPER/case", "repo with space"} {
		if _, err := Reference(bad, "v1", nil); err == nil {
			t.Errorf("Reference(%q) accepted it", bad)
		}
	}
}

// The manifest and the built image agree: repository, tag, and the digest when pinned.
func TestCheckManifest(t *testing.T) {
	b, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	render := func(repo string, digest *v1.Hash) []byte {
		ref, err := Reference(repo, "v1.2.3", digest)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Render(b, ref)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		name     string
		manifest []byte
		tag      string
		pinned   bool
		wantErr  string
	}{
		{"tag", render(Repository, nil), "v1.2.3", false, ""},
		{"pinned", render(Repository, &digestA), "v1.2.3", true, ""},
		{"pinned, not required", render(Repository, &digestA), "v1.2.3", false, ""},
		{"not pinned", render(Repository, nil), "v1.2.3", true, "pins no digest"},
		{"other digest", render(Repository, &digestB), "v1.2.3", false, "the built image is sha256:aaaa"},
		{"other tag", render(Repository, nil), "v1.2.4", false, "is not tagged v1.2.4"},
		{"other repository", render("registry.example.com/kubectl-ray", nil), "v1.2.3", false, "not the release's repository"},
	} {
		_, err := CheckManifest(c.manifest, Repository, c.tag, digestA, c.pinned)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: CheckManifest = %v, want an error with %q", c.name, err, c.wantErr)
		}
	}
}
