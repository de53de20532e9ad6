package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Repository is where a release's image is published; the watchdog manifest names it.
const Repository = "kubectl-ray/kubectl-ray"

// Deployment and container in docs/deploy/watchdog.yaml that run the image.
const (
	deploymentName = "kubectl-ray-heal"
	containerName  = "heal"
)

// imageLine is the manifest's one `image:` line. The manifest is edited as text so that its
// comments survive; the result is then parsed to check it.
var imageLine = regexp.MustCompile(`(?m)^(\s+image:\s*)(\S+)\s*$`)

// Reference is repo:tag, or repo:tag@digest when the digest is pinned.
func Reference(repo, tag string, digest *v1.Hash) (string, error) {
	ref := repo + ":" + tag
	if digest != nil {
		ref += "@" + digest.String()
	}
	if _, err := name.ParseReference(ref, name.WeakValidation); err != nil {
		return "", fmt.Errorf("%q is not an image reference: %w", ref, err)
	}
	return ref, nil
}

// Render sets the image of the manifest's one container to ref.
func Render(manifest []byte, ref string) ([]byte, error) {
	if n := len(imageLine.FindAll(manifest, -1)); n != 1 {
		return nil, fmt.Errorf("want exactly one image: line in the manifest, found %d", n)
	}
	out := imageLine.ReplaceAll(manifest, []byte("${1}"+ref))
	if _, err := ManifestImage(out); err != nil {
		return nil, err
	}
	return out, nil
}

// ManifestImage finds the watchdog Deployment's container and returns its image. The
// container must not set command: the image's entrypoint runs the binary.
func ManifestImage(manifest []byte) (string, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var d appsv1.Deployment
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("no Deployment %s in the manifest", deploymentName)
		}
		if err != nil {
			return "", err
		}
		if d.Kind != "Deployment" || d.Name != deploymentName {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name != containerName {
				continue
			}
			if len(c.Command) != 0 {
				return "", fmt.Errorf("container %s sets command %q; the image's entrypoint runs the binary", c.Name, c.Command)
			}
			return c.Image, nil
		}
		return "", fmt.Errorf("Deployment %s has no container %s", deploymentName, containerName)
	}
}

// CheckManifest checks that the manifest runs this image: the repository and tag, and the
// digest when the manifest pins one (then it must be the index's, which every platform's
// runtime resolves from). pinned requires a digest.
func CheckManifest(manifest []byte, repo, tag string, digest v1.Hash, pinned bool) (string, error) {
	img, err := ManifestImage(manifest)
	if err != nil {
		return "", err
	}
	ref, err := name.ParseReference(img, name.WeakValidation)
	if err != nil {
		return "", fmt.Errorf("the manifest's image %q: %w", img, err)
	}
	want, err := name.NewRepository(repo, name.WeakValidation)
	if err != nil {
		return "", err
	}
	if ref.Context().String() != want.String() {
		return "", fmt.Errorf("the manifest runs %s, not the release's repository %s", ref.Context(), want)
	}
	// A digest reference keeps its tag only in the text: repo:tag@sha256:...
	m := regexp.MustCompile(`:([\w][\w.-]{0,127})(@sha256:[0-9a-f]{64})?$`).FindStringSubmatch(img)
	if m == nil || m[1] != tag {
		return "", fmt.Errorf("the manifest's image %s is not tagged %s", img, tag)
	}
	if d, ok := ref.(name.Digest); ok {
		if d.DigestStr() != digest.String() {
			return "", fmt.Errorf("the manifest pins %s, the built image is %s", d.DigestStr(), digest)
		}
	} else if pinned {
		return "", fmt.Errorf("the manifest's image %s pins no digest", img)
	}
	return img, nil
}
