// Command chart renders the watchdog's Helm chart (docs/deploy/chart/kubectl-ray-watchdog) with
// Helm's own library, no helm binary: docs/deploy/watchdog.yaml and monitoring.yaml are its
// renderings with the default values, and its tests lint it and render it for a matrix of values.
// A module of its own so that Helm never reaches the kubectl-ray binary; `make test` runs it.
//
//	go run . render [-digest sha256:...]        # rewrites docs/deploy/watchdog.yaml and monitoring.yaml
//	go run . version vX.Y.Z                     # sets the chart's version and appVersion (the image tag)
//	go run . package vX.Y.Z DIR                 # checks them against the tag, writes DIR/kubectl-ray-watchdog-X.Y.Z.tgz
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// The checked-in files, from this module's directory.
const (
	chartDir   = "../../docs/deploy/chart/kubectl-ray-watchdog"
	manifest   = "../../docs/deploy/watchdog.yaml"
	monitoring = "../../docs/deploy/monitoring.yaml"
)

// The plain manifest is a release named kubectl-ray-heal in namespace kubectl-ray.
const (
	releaseName = "kubectl-ray-heal"
	namespace   = "kubectl-ray"
)

// Rendered is one rendering: its documents in Helm's install order, and NOTES.txt.
type Rendered struct {
	Manifest string
	Notes    string
}

// Render renders the chart in dir as `helm template` does (a client-only install: values
// checked against values.schema.json, no API server), for release name in namespace ns.
func Render(dir, name, ns string, values map[string]any) (Rendered, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return Rendered{}, err
	}
	in := action.NewInstall(action.NewConfiguration())
	in.DryRunStrategy = action.DryRunClient
	in.ReleaseName, in.Namespace, in.Replace = name, ns, true
	r, err := in.Run(ch, values)
	if err != nil {
		return Rendered{}, err
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return Rendered{}, fmt.Errorf("helm returned a %T", r)
	}
	return Rendered{Manifest: rel.Manifest, Notes: rel.Info.Notes}, nil
}

// Documents splits a rendering into its documents, each headed by Helm's "# Source:" line.
func Documents(m string) []string {
	var docs []string
	for _, d := range strings.Split(m, "\n---\n") {
		d = strings.TrimPrefix(strings.TrimSpace(d), "---\n")
		if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(d, "")) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

const manifestHeader = `# kubectl ray heal --watch, run in-cluster: two replicas, one acting at a time (Lease
# "kubectl-ray-heal" in the watchdog's own namespace), least-privilege RBAC.
#
# GENERATED from the Helm chart docs/deploy/chart/kubectl-ray-watchdog with its default values
# (release kubectl-ray-heal, namespace kubectl-ray), plus the Namespace that helm install
# --create-namespace makes: cd hack/chart && go run . render. Edit the chart, not this file;
# hack/chart's tests fail when the two differ. helm install is the way to change a value
# (docs/deploy/README.md).
#
# The image is the release's (docs/deploy/README.md): the kubectl-ray binary, CA certificates,
# no shell, user 65532, for linux/amd64 and linux/arm64. A release renders this file with its
# tag (make watchdog-manifest VERSION=vX.Y.Z); pin the digest, or use a private registry's copy,
# as docs/deploy/README.md shows.
#
#   kubectl apply -f docs/deploy/watchdog.yaml
#   kubectl -n kubectl-ray logs deploy/kubectl-ray-heal -f
#
# Metrics on port 8080 (/metrics, Service kubectl-ray-heal-metrics); with the Prometheus
# Operator, docs/deploy/monitoring.yaml adds a PodMonitor and alerts. --force (heads stuck
# Terminating on a dead node) also needs nodes list/watch: the chart's heal.force adds both.
apiVersion: v1
kind: Namespace
metadata:
  name: kubectl-ray
`

const monitoringHeader = `# Prometheus Operator objects for the watchdog of docs/deploy/watchdog.yaml: a PodMonitor that
# scrapes both replicas' /metrics, and alerts. Apply after watchdog.yaml:
#
#   kubectl apply -f docs/deploy/monitoring.yaml
#
# GENERATED from the Helm chart docs/deploy/chart/kubectl-ray-watchdog (metrics.podMonitor and
# metrics.prometheusRule on; the alerts are its alerts.yaml): cd hack/chart && go run . render.
# The alert expressions are checked by Prometheus' own rule parser in the project's tests
# (hack/alerts). Label selectors of your Prometheus (podMonitorSelector, ruleSelector) may need
# a label added: the chart's additionalLabels, e.g. release: prometheus.
`

// monitorValues turns on what monitoring.yaml holds.
var monitorValues = map[string]any{"metrics": map[string]any{
	"podMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}}}

// PlainFiles renders watchdog.yaml (the defaults, digest pinned when not empty) and
// monitoring.yaml (only the monitoring documents of a rendering with the monitors on).
func PlainFiles(dir, digest string) (watchdog, mon []byte, err error) {
	var vals map[string]any
	if digest != "" {
		vals = map[string]any{"image": map[string]any{"digest": digest}}
	}
	r, err := Render(dir, releaseName, namespace, vals)
	if err != nil {
		return nil, nil, err
	}
	var w bytes.Buffer
	w.WriteString(manifestHeader)
	for _, d := range Documents(r.Manifest) {
		w.WriteString("---\n" + d + "\n")
	}
	r, err = Render(dir, releaseName, namespace, monitorValues)
	if err != nil {
		return nil, nil, err
	}
	var m bytes.Buffer
	m.WriteString(monitoringHeader)
	var mdocs []string
	for _, d := range Documents(r.Manifest) {
		if strings.Contains(d, "\napiVersion: monitoring.coreos.com/v1\n") {
			mdocs = append(mdocs, d)
		}
	}
	sort.Strings(mdocs) // podmonitor.yaml before prometheusrule.yaml, by their Source lines
	m.WriteString(strings.Join(mdocs, "\n---\n") + "\n")
	return w.Bytes(), m.Bytes(), nil
}

// imageDigest is the digest the checked-in manifest pins, if any.
func imageDigest(manifest []byte) string {
	m := regexp.MustCompile(`(?m)^\s+image: \S+@(sha256:[0-9a-f]{64})$`).FindSubmatch(manifest)
	if m == nil {
		return ""
	}
	return string(m[1])
}

var releaseVersion = regexp.MustCompile(`^v(\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?)$`)

// SetVersion writes the release's version into Chart.yaml: version X.Y.Z and appVersion vX.Y.Z,
// the image tag. The lines are edited as text so that the file's comments stay.
func SetVersion(dir, v string) error {
	m := releaseVersion.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("version %q is not vX.Y.Z", v)
	}
	p := filepath.Join(dir, "Chart.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	for _, kv := range [][2]string{{"version", m[1]}, {"appVersion", v}} {
		re := regexp.MustCompile(`(?m)^` + kv[0] + `: .*$`)
		if len(re.FindAll(b, -1)) != 1 {
			return fmt.Errorf("%s: want one %s: line", p, kv[0])
		}
		b = re.ReplaceAll(b, []byte(kv[0]+": "+kv[1]))
	}
	return os.WriteFile(p, b, 0o644)
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 2 && args[0] == "version":
		return SetVersion(chartDir, args[1])
	case len(args) == 3 && args[0] == "package":
		path, err := Package(chartDir, args[1], args[2])
		if err == nil {
			fmt.Println(path)
		}
		return err
	case len(args) >= 1 && args[0] == "render":
		digest := ""
		if len(args) == 3 && args[1] == "-digest" {
			digest = args[2]
		} else if len(args) != 1 {
			break
		}
		w, m, err := PlainFiles(chartDir, digest)
		if err != nil {
			return err
		}
		if err := os.WriteFile(manifest, w, 0o644); err != nil {
			return err
		}
		return os.WriteFile(monitoring, m, 0o644)
	}
	return fmt.Errorf("usage: chart render [-digest sha256:...] | chart version vX.Y.Z | chart package vX.Y.Z DIR")
}
