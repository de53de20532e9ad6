//go:build bench

package manifest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/bench/internal/release"
)

const (
	documents = 1000
	runs      = 5 // each measurement is repeated; the median is reported
	// The budget (docs/performance.md): doctor -f on 1,000 RayCluster documents under 1 s.
	budget = time.Second
)

// document is one RayCluster shaped like KubeRay's ray-cluster.complete.yaml: a head and one
// worker group, each with resources, ports, a lifecycle hook and volumes.
func document(i int) string {
	return fmt.Sprintf(`apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: raycluster-%04d
  labels: {team: ml}
spec:
  rayVersion: "2.9.0"
  headGroupSpec:
    rayStartParams:
      dashboard-host: "0.0.0.0"
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.9.0
          ports:
          - {containerPort: 6379, name: gcs}
          - {containerPort: 8265, name: dashboard}
          - {containerPort: 10001, name: client}
          lifecycle:
            preStop:
              exec: {command: ["/bin/sh", "-c", "ray stop"]}
          volumeMounts:
          - {mountPath: /tmp/ray, name: ray-logs}
          resources:
            limits: {cpu: "1", memory: 2G}
            requests: {cpu: "1", memory: 2G}
        volumes:
        - {name: ray-logs, emptyDir: {}}
  workerGroupSpecs:
  - groupName: small-group
    replicas: 1
    minReplicas: 1
    maxReplicas: 10
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.9.0
          lifecycle:
            preStop:
              exec: {command: ["/bin/sh", "-c", "ray stop"]}
          volumeMounts:
          - {mountPath: /tmp/ray, name: ray-logs}
          resources:
            limits: {cpu: "1", memory: 1G}
            requests: {cpu: "1", memory: 1G}
        volumes:
        - {name: ray-logs, emptyDir: {}}
`, i)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestDoctorFiles(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	bin := filepath.Join(work, "kubectl-ray")
	if err := release.Build(ctx, "../..", release.Plugin, bin); err != nil {
		t.Fatal(err)
	}
	docs := make([]string, documents)
	for i := range docs {
		docs[i] = document(i)
	}
	file := filepath.Join(work, "clusters.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	var floor, doctor []time.Duration
	for r := 0; r < runs; r++ {
		// The floor: reading the file and decoding each document into a RayCluster, nothing else.
		start := time.Now()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range bytes.Split(data, []byte("---\n")) {
			var rc rayv1.RayCluster
			if err := yaml.Unmarshal(d, &rc); err != nil {
				t.Fatal(err)
			}
		}
		floor = append(floor, time.Since(start))

		start = time.Now()
		cmd := exec.CommandContext(ctx, bin, "doctor", "-f", file, "--offline", "-o", "json", "--fail-on", "never")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("doctor -f: %v\n%s", err, errb.String())
		}
		doctor = append(doctor, time.Since(start))
		if !bytes.Contains(out.Bytes(), []byte(fmt.Sprintf(`"documents": %d`, documents))) {
			t.Fatalf("doctor -f did not read %d documents:\n%.400s", documents, out.String())
		}
	}
	f, d := median(floor), median(doctor)
	t.Logf("doctor -f on %d RayCluster documents: %v (runs %v); floor, decoding them alone in one process: %v (runs %v); ratio %.2f",
		documents, d.Round(time.Millisecond), doctor, f.Round(time.Millisecond), floor, float64(d)/float64(f))
	if d > budget {
		t.Errorf("doctor -f took %v, over the %v budget", d, budget)
	}
}
