package main

import (
	"fmt"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	v2loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// Package writes the chart in dir as a .tgz into out, as helm package does, after checking that
// its version and appVersion are the release's (tag vX.Y.Z: version X.Y.Z, appVersion vX.Y.Z),
// and reads the archive back: the same versions, and the Deployment runs the release's image
// by default. It returns the archive's path.
func Package(dir, tag, out string) (string, error) {
	ch, err := v2loader.Load(dir)
	if err != nil {
		return "", err
	}
	if err := checkVersions(ch, tag); err != nil {
		return "", fmt.Errorf("%s: %w (go run . version %s)", dir, err, tag)
	}
	path, err := chartutil.Save(ch, out)
	if err != nil {
		return "", err
	}
	back, err := v2loader.Load(path)
	if err != nil {
		return "", err
	}
	if err := checkVersions(back, tag); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	r, err := Render(path, releaseName, namespace, nil)
	if err != nil {
		return "", err
	}
	if want := "image: " + "kubectl-ray/kubectl-ray:" + tag + "\n"; !strings.Contains(r.Manifest, want) {
		return "", fmt.Errorf("%s does not run kubectl-ray/kubectl-ray:%s by default", path, tag)
	}
	return path, nil
}

func checkVersions(ch *chartv2.Chart, tag string) error {
	m := releaseVersion.FindStringSubmatch(tag)
	if m == nil {
		return fmt.Errorf("tag %q is not vX.Y.Z", tag)
	}
	if ch.Metadata.Version != m[1] || ch.Metadata.AppVersion != tag {
		return fmt.Errorf("version %q and appVersion %q, want %q and %q", ch.Metadata.Version, ch.Metadata.AppVersion, m[1], tag)
	}
	return nil
}
