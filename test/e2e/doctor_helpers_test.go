package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// drDoc is the -o json DoctorReport as a script reads it. It is declared here, not imported from
// pkg/cmd/doctor, so a renamed field on the wire fails these tests.
type drDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace string `json:"namespace"`
		FailOn    string `json:"failOn"`
		Target    string `json:"target"`
	} `json:"metadata"`
	Summary struct {
		Clusters     int `json:"clusters"`
		Healthy      int `json:"healthy"`
		WithErrors   int `json:"withErrors"`
		WithWarnings int `json:"withWarnings"`
	} `json:"summary"`
	Operators []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Version   string `json:"version"`
	} `json:"operators"`
	Clusters []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Health    string `json:"health"`
		Owner     *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"owner"`
		Heads  []string `json:"heads"`
		Groups []struct {
			Name    string `json:"name"`
			Desired int    `json:"desired"`
			Pods    int    `json:"pods"`
		} `json:"groups"`
		Ray *struct {
			Read        bool           `json:"read"`
			Unreachable string         `json:"unreachable"`
			GCSAlive    bool           `json:"gcsAlive"`
			RayVersion  string         `json:"rayVersion"`
			AliveNodes  int            `json:"aliveNodes"`
			DeadNodes   int            `json:"deadNodes"`
			Apps        map[string]int `json:"apps"`
		} `json:"ray"`
	} `json:"clusters"`
	RayJobs []struct {
		Namespace           string `json:"namespace"`
		Name                string `json:"name"`
		Health              string `json:"health"`
		Cluster             string `json:"cluster"`
		JobDeploymentStatus string `json:"jobDeploymentStatus"`
	} `json:"rayJobs"`
	RayServices []struct {
		Name     string   `json:"name"`
		Health   string   `json:"health"`
		Clusters []string `json:"clusters"`
	} `json:"rayServices"`
	Findings []drFinding `json:"findings"`
	Blind    []struct {
		Resource string `json:"resource"`
		Reason   string `json:"reason"`
	} `json:"blind"`
}

type drFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Cluster  *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"cluster"`
	RayJob *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"rayJob"`
	RayService *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"rayService"`
	Object struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Field    string            `json:"field"`
	Message  string            `json:"message"`
	Remedy   string            `json:"remedy"`
	Evidence map[string]string `json:"evidence"`
}

// doctorJSON runs `kubectl-ray doctor -o json args...` and parses the report; it fails the test
// when stdout is not a DoctorReport.
// manifestFile writes docs as YAML documents (as a person's manifest for doctor -f) to a file
// named name.yaml in a directory of the test's own, and returns its path.
func manifestFile(t *testing.T, name string, docs ...any) string {
	t.Helper()
	parts := make([]string, len(docs))
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = string(b)
	}
	file := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(file, []byte(strings.Join(parts, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func (h *H) doctorJSON(args ...string) (drDoc, Result) {
	h.T.Helper()
	res := h.Run(append([]string{"doctor", "-o", "json"}, args...)...)
	var d drDoc
	if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
		h.T.Fatalf("doctor -o json %v: stdout is not JSON (%v)\n%s", args, err, res)
	}
	if d.APIVersion != "kubectl-ray.io/v1alpha1" || d.Kind != "DoctorReport" {
		h.T.Fatalf("doctor -o json: apiVersion %q kind %q", d.APIVersion, d.Kind)
	}
	return d, res
}

// rules lists the findings about cluster as "rule kind/name", sorted; cluster "" selects the
// cluster-independent (operator) findings. The rules about the spec (scope "spec") are left out:
// they judge how a cluster was written, not what happened to it, and fire on most samples;
// specRules lists them, and their own tests hold them.
func (d drDoc) rules(cluster string) []string {
	var out []string
	for _, f := range d.Findings {
		if info, _ := diagnose.RuleOf(f.Rule); info.Scope == "spec" {
			continue
		}
		name := ""
		if f.Cluster != nil {
			name = f.Cluster.Name
		}
		if name == cluster {
			out = append(out, f.Rule+" "+strings.ToLower(f.Object.Kind)+"/"+f.Object.Name)
		}
	}
	sort.Strings(out)
	return out
}

// specRules lists the findings of the rules about the spec about cluster, as rules does.
func (d drDoc) specRules(cluster string) []string {
	var out []string
	for _, f := range d.Findings {
		if info, _ := diagnose.RuleOf(f.Rule); info.Scope == "spec" && f.Cluster != nil && f.Cluster.Name == cluster {
			out = append(out, f.Rule+" "+strings.ToLower(f.Object.Kind)+"/"+f.Object.Name)
		}
	}
	sort.Strings(out)
	return out
}

// finding returns the one finding of rule about cluster, failing the test when there is not exactly one.
func (d drDoc) finding(t *testing.T, cluster, rule string) drFinding {
	t.Helper()
	var got []drFinding
	for _, f := range d.Findings {
		if f.Rule == rule && (f.Cluster == nil && cluster == "" || f.Cluster != nil && f.Cluster.Name == cluster) {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want one %s finding for %q, got %d; findings: %v", rule, cluster, len(got), d.rules(cluster))
	}
	return got[0]
}

func (d drDoc) health(cluster string) string {
	for _, c := range d.Clusters {
		if c.Name == cluster {
			return c.Health
		}
	}
	return "<not checked>"
}

// wantRules fails unless the findings about cluster are exactly want ("rule kind/name").
func wantRules(t *testing.T, d drDoc, cluster string, want ...string) {
	t.Helper()
	sort.Strings(want)
	got := d.rules(cluster)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings for %q:\n  got  %q\n  want %q", cluster, got, want)
	}
}

// wantContains fails unless s contains every part.
func wantContains(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s does not contain %q:\n%s", what, p, s)
		}
	}
}

// wantOneLineError fails unless res is a failure with code, nothing on stdout, and exactly one
// line on stderr, starting "error: ", containing every part, without a Go stack trace.
func wantOneLineError(t *testing.T, res Result, code int, parts ...string) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("want exit %d, got %s", code, res)
	}
	if res.Stdout != "" {
		t.Errorf("want nothing on stdout, got %q", res.Stdout)
	}
	line := strings.TrimSuffix(res.Stderr, "\n")
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "error: ") {
		t.Errorf("want one line starting \"error: \" on stderr, got %q", res.Stderr)
	}
	for _, bad := range []string{"goroutine ", "panic", ".go:"} {
		if strings.Contains(res.Stderr, bad) {
			t.Errorf("stderr looks like a stack trace (%q): %q", bad, res.Stderr)
		}
	}
	wantContains(t, "stderr", line, parts...)
}

// headOf returns the single head of cluster, failing otherwise.
func (h *H) headOf(cluster string) corev1.Pod {
	h.T.Helper()
	heads := h.Pods(cluster, "head")
	if len(heads) != 1 {
		h.T.Fatalf("want one head of %s, got %v", cluster, podNames(heads))
	}
	return heads[0]
}

// kubeletNodeShutdown writes what the kubelet's graceful node shutdown writes on a pod it stopped
// (a kubelet stand-in: no kubelet runs here): phase Failed, reason Terminated, the shutdown
// message, containers terminated with exit 137. Like an eviction, the pod object stays.
func (h *H) kubeletNodeShutdown(name string) {
	h.T.Helper()
	pod, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Reason = "Terminated"
	pod.Status.Message = "Pod was terminated in response to imminent node shutdown."
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "PodFailed", now
		}
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		started := now
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.Ready = false
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "Error", StartedAt: started, FinishedAt: now}}
	}
	if _, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, pod, metav1.UpdateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

func rule(r, kind, name string) string { return fmt.Sprintf("%s %s/%s", r, kind, name) }
