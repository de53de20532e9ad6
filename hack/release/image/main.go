// Command image builds the watchdog's container image from the linux binaries of a GoReleaser
// dist/, with no Docker daemon and no base image (so no registry), checks it, and renders
// docs/deploy/watchdog.yaml to run it. docs/deploy/README.md says why and how.
//
//	go run ./hack/release/image build  -dist dist -out dist/image
//	go run ./hack/release/image verify -layout dist/image -version v1.2.3 -commit abc1234 [-dist dist] [-manifest FILE [-pinned]]
//	go run ./hack/release/image render -version v1.2.3 [-digest sha256:... | -layout dist/image] < docs/deploy/watchdog.yaml
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// releaseVersion is a release's tag: GoReleaser's version with the v the binary reports.
var releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

const usage = `usage: image build|verify|render [flags]; image CMD -h for the flags`

// Source is the repository the image is built from: its source label.
const Source = "https://github.com/kubectl-ray/kubectl-ray"

func main() {
	if len(os.Args) < 2 {
		fail(2, usage)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "verify":
		err = verify(os.Args[2:])
	case "render":
		err = render(os.Args[2:], os.Stdin, os.Stdout)
	default:
		fail(2, usage)
	}
	if err != nil {
		fail(1, "image "+os.Args[1]+": "+err.Error())
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(code)
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	dist := fs.String("dist", "dist", "GoReleaser's dist directory (metadata.json, artifacts.json, the binaries)")
	out := fs.String("out", "dist/image", "the OCI image layout to write (replaced)")
	platform := fs.String("platform", "", "only these platforms, comma-separated (linux/amd64): for a test on one machine; a release builds all")
	fs.Parse(args)
	platforms, err := parsePlatforms(*platform)
	if err != nil {
		return err
	}
	rel, err := readRelease(*dist, Source)
	if err != nil {
		return err
	}
	bins, err := linuxBinaries(*dist, platforms)
	if err != nil {
		return err
	}
	idx, err := BuildIndex(rel, bins)
	if err != nil {
		return err
	}
	if err := WriteLayout(*out, idx, rel.Tag()); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image: %s:%s@%s (%s) in %s\n", Repository, rel.Tag(), digest, platformList(platforms), *out)
	return nil
}

func verify(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	dir := fs.String("layout", "dist/image", "the OCI image layout")
	version := fs.String("version", "", "the release's version, e.g. v1.2.3 (the tag)")
	commit := fs.String("commit", "", "the commit the binary reports (short SHA)")
	dist := fs.String("dist", "", "GoReleaser's dist directory: the image's binaries must be its bytes")
	manifest := fs.String("manifest", "", "a rendered watchdog manifest that must run this image")
	pinned := fs.Bool("pinned", false, "the manifest must pin the image's digest")
	fs.Parse(args)
	if *version == "" || *commit == "" {
		return fmt.Errorf("pass -version and -commit")
	}
	idx, tag, err := ReadLayout(*dir)
	if err != nil {
		return err
	}
	if tag != *version {
		return fmt.Errorf("%s is tagged %q, want %q", *dir, tag, *version)
	}
	want := Want{Version: *version, Commit: *commit, Source: Source}
	if *dist != "" {
		if want.Bins, err = linuxBinaries(*dist, Platforms); err != nil {
			return err
		}
	}
	done, err := Verify(idx, want)
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	for _, d := range done {
		fmt.Println("image:", d)
	}
	if *manifest != "" {
		b, err := os.ReadFile(*manifest)
		if err != nil {
			return err
		}
		img, err := CheckManifest(b, Repository, *version, digest, *pinned)
		if err != nil {
			return fmt.Errorf("%s: %w", *manifest, err)
		}
		fmt.Printf("image: %s runs %s, the image built (%s)\n", *manifest, img, digest)
	}
	return nil
}

func render(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ExitOnError)
	version := fs.String("version", "", "the release's version, e.g. v1.2.3 (the tag)")
	repo := fs.String("repo", Repository, "the image repository (a private registry's copy, for example)")
	digest := fs.String("digest", "", "pin this digest (sha256:...; `crane digest REF` prints it)")
	dir := fs.String("layout", "", "pin the digest of the image in this OCI layout")
	fs.Parse(args)
	if !releaseVersion.MatchString(*version) || (*digest != "" && *dir != "") {
		return fmt.Errorf("pass -version vX.Y.Z (got %q), and at most one of -digest and -layout", *version)
	}
	var pin *v1.Hash
	switch {
	case *digest != "":
		h, err := v1.NewHash(*digest)
		if err != nil {
			return fmt.Errorf("-digest: %w", err)
		}
		pin = &h
	case *dir != "":
		idx, _, err := ReadLayout(*dir)
		if err != nil {
			return err
		}
		h, err := idx.Digest()
		if err != nil {
			return err
		}
		pin = &h
	}
	ref, err := Reference(*repo, *version, pin)
	if err != nil {
		return err
	}
	manifest, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	rendered, err := Render(manifest, ref)
	if err != nil {
		return err
	}
	_, err = out.Write(rendered)
	return err
}
