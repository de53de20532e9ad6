package doctor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// loadObjects decodes a multi-document YAML file of Kubernetes and KubeRay objects.
func loadObjects(t *testing.T, path string) (core, ray []runtime.Object) {
	t.Helper()
	sch := runtime.NewScheme()
	if err := scheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	if err := rayv1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(sch).UniversalDeserializer()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		obj, gvk, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if gvk.Group == rayv1.GroupVersion.Group {
			ray = append(ray, obj)
		} else {
			core = append(core, obj)
		}
	}
	return core, ray
}

type result struct {
	stdout, stderr string
	code           int
}

// run executes `kubectl-ray doctor args...` over fake clients holding the scene, the way Main
// does: errors printed as one line, exit code from pkg/exit.
func run(t *testing.T, scene string, setup func(*kfake.Clientset, *rayfake.Clientset), args ...string) result {
	t.Helper()
	return runWith(t, scene, setup, nil, args...)
}

// runWith is run with the factory adjusted by configure (e.g. a terminal width).
func runWith(t *testing.T, scene string, setup func(*kfake.Clientset, *rayfake.Clientset), configure func(*cmdutil.Factory), args ...string) result {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	core, ray := loadObjects(t, filepath.Join("testdata", scene+".yaml"))
	kc, rc := kfake.NewClientset(core...), rayfake.NewSimpleClientset(ray...)
	if setup != nil {
		setup(kc, rc)
	}
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
	f.Now = func() time.Time { return now }
	tunnels, _ := raytest.Dashboard(t, raytest.Quiet)
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Ray: rc, Tunnels: tunnels}, nil
	}
	if configure != nil {
		configure(f)
	}
	root := &cobra.Command{Use: "kubectl-ray", SilenceErrors: true, SilenceUsage: true}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().BoolVar(&f.NoColor, "no-color", false, "")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return exit.Usagef("%v", err) })
	root.AddCommand(doctor.NewCmd(f, nil))
	root.SetArgs(append([]string{"doctor"}, args...))
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(context.Background())
	code := exit.CodeOf(err)
	if err != nil && !exit.Has(err) {
		code = exit.Usage
	}
	if _, silent := err.(exit.Silent); err != nil && !silent {
		errOut.WriteString("error: " + exit.Message(err) + "\n")
	}
	return result{out.String(), errOut.String(), code}
}

func TestOutputs(t *testing.T) {
	assertOutputs(t, []outputCase{
		{"scene-table", []string{"-n", "ml"}, exit.CheckFailed},
		{"scene-wide", []string{"-n", "ml", "-o", "wide"}, exit.CheckFailed},
		{"scene-json", []string{"-n", "ml", "-o", "json"}, exit.CheckFailed},
		{"scene-yaml", []string{"-n", "ml", "-o", "yaml"}, exit.CheckFailed},
		{"scene-junit", []string{"-n", "ml", "-o", "junit"}, exit.CheckFailed},
		{"scene-rayservice", []string{"-n", "ml", "rayservice/svc"}, exit.OK},
		{"scene-rayservice-fail-on-warning", []string{"-n", "ml", "rayservice/svc", "--fail-on", "warning"}, exit.CheckFailed},
		{"scene-healthy-cluster", []string{"-n", "ml", "raycluster-b"}, exit.OK},
		{"scene-selector", []string{"-A", "-l", "team=ml", "--fail-on", "never"}, exit.OK},
		{"scene-empty-namespace", []string{"-n", "empty"}, exit.OK},
	}, "")
}

// outputCase is one doctor run on the scene: its flags, its exit code, and the golden file of
// its stdout, testdata/NAME.golden.
type outputCase struct {
	name string
	args []string
	code int
}

// assertOutputs runs each case with extra after its flags; stderr must match the golden file
// stderrGolden, or be empty when that is "".
func assertOutputs(t *testing.T, cases []outputCase, stderrGolden string, extra ...string) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "scene", nil, append(tc.args, extra...)...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d; stderr: %s", r.code, tc.code, r.stderr)
			}
			if stderrGolden != "" {
				golden.Assert(t, filepath.Join("testdata", stderrGolden), []byte(r.stderr))
			} else if r.stderr != "" {
				t.Errorf("unexpected stderr: %s", r.stderr)
			}
			golden.Assert(t, filepath.Join("testdata", tc.name+".golden"), []byte(r.stdout))
		})
	}
}

func forbid(resource string) k8stesting.ReactionFunc {
	return func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", nil)
	}
}

// A user who cannot list nodes or deployments still gets a diagnosis, and is told what was not checked.
func TestBlind(t *testing.T) {
	r := run(t, "scene", func(kc *kfake.Clientset, _ *rayfake.Clientset) {
		kc.PrependReactor("list", "nodes", forbid("nodes"))
		kc.PrependReactor("list", "deployments", forbid("deployments"))
	}, "-n", "ml", "-o", "json")
	if r.code != exit.CheckFailed {
		t.Errorf("exit code %d, want 1", r.code)
	}
	golden.Assert(t, filepath.Join("testdata", "blind-stderr.golden"), []byte(r.stderr))
	golden.Assert(t, filepath.Join("testdata", "blind-json.golden"), []byte(r.stdout))
}

// Bad input: one line, the fix, the documented exit code.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		setup func(*kfake.Clientset, *rayfake.Clientset)
		code  int
		line  string
	}{
		{"unknown name", []string{"-n", "ml", "nope"}, nil, exit.NotFound,
			`error: RayCluster, RayService or RayJob "nope" not found in namespace "ml"; list them with: kubectl get rayclusters,rayservices,rayjobs -n ml`},
		{"unknown rayservice", []string{"-n", "ml", "-l", "team=ml", "rayservice/nope"}, nil, exit.NotFound,
			`error: RayService "nope" not found in namespace "ml" matching -l team=ml; list them with: kubectl get rayservices -n ml -l team=ml`},
		{"name with -A", []string{"-A", "rayservice/svc"}, nil, exit.Usage,
			`error: a NAME is looked up in one namespace, as in kubectl get: pass -n NAMESPACE instead of -A, or drop the NAME`},
		{"bad kind", []string{"-n", "ml", "deployment/x"}, nil, exit.Usage,
			`error: cannot check "deployment/x": name a raycluster/NAME, rayservice/NAME, rayjob/NAME or raycronjob/NAME`},
		{"pod is not a doctor target", []string{"-n", "ml", "pod/x"}, nil, exit.Usage,
			`error: cannot check "pod/x": name a raycluster/NAME, rayservice/NAME, rayjob/NAME or raycronjob/NAME`},
		{"no name after the kind", []string{"-n", "ml", "rayservice/"}, nil, exit.Usage,
			`error: cannot check "rayservice/": name a raycluster/NAME, rayservice/NAME, rayjob/NAME or raycronjob/NAME`},
		{"qualified singular kind", []string{"-n", "ml", "rayservice.ray.io/nope"}, nil, exit.NotFound,
			`error: RayService "nope" not found in namespace "ml"; list them with: kubectl get rayservices -n ml`},
		{"bad output", []string{"-n", "ml", "-o", "xml"}, nil, exit.Usage,
			`error: unknown output format "xml": use -o table|wide|json|yaml|junit`},
		{"bad selector", []string{"-n", "ml", "-l", "a==b=c"}, nil, exit.Usage, `error: bad label selector "a==b=c": `},
		{"bad fail-on", []string{"-n", "ml", "--fail-on", "info"}, nil, exit.Usage,
			`error: unknown --fail-on "info": use --fail-on error|warning|never`},
		{"two names", []string{"-n", "ml", "a", "b"}, nil, exit.Usage, `error: accepts at most 1 arg(s), received 2`},
		{"forbidden rayclusters", []string{"-n", "ml"}, func(_ *kfake.Clientset, rc *rayfake.Clientset) {
			rc.PrependReactor("list", "rayclusters", forbid("rayclusters"))
		}, exit.Forbidden, `error: forbidden: you cannot list rayclusters.ray.io in namespace "ml"; ask for RBAC verb "list" on "rayclusters.ray.io" (check with: kubectl auth can-i list rayclusters.ray.io -n ml)`},
		{"no CRDs", []string{"-A"}, func(_ *kfake.Clientset, rc *rayfake.Clientset) {
			rc.PrependReactor("list", "rayclusters", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, "")
			})
		}, exit.API, `error: KubeRay is not installed in this cluster: the API has no rayclusters.ray.io; install the KubeRay CRDs and operator, or pick another --context`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "scene", tc.setup, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d", r.code, tc.code)
			}
			if !strings.HasPrefix(r.stderr, tc.line) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr = %q, want one line starting %q", r.stderr, tc.line)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

// The scene's head has REDIS_PASSWORD and a Redis URI with the password: no output format may
// carry the value, plain, base64 or URL-encoded.
func TestNoSecretInAnyOutput(t *testing.T) {
	const secret = "Sup3rS3cretRedis"
	forms := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), "redis://:"}
	for _, o := range []string{"table", "wide", "json", "yaml", "junit"} {
		r := run(t, "scene", nil, "-A", "-o", o)
		if !strings.Contains(r.stdout, "raycluster-a-head-abcde") {
			t.Fatalf("-o %s does not report the evicted head, so it checks nothing:\n%s", o, r.stdout)
		}
		for _, f := range forms {
			if strings.Contains(r.stdout+r.stderr, f) {
				t.Errorf("-o %s output contains %q", o, f)
			}
		}
	}
}

func TestColor(t *testing.T) {
	// The test streams are not terminals: no escape codes, whatever NO_COLOR says.
	r := run(t, "scene", nil, "-n", "ml")
	if bytes.ContainsRune([]byte(r.stdout), '\x1b') {
		t.Error("colored output to a pipe")
	}
}

func TestCompletion(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	core, ray := loadObjects(t, filepath.Join("testdata", "scene.yaml"))
	kc, rc := kfake.NewClientset(core...), rayfake.NewSimpleClientset(ray...)
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Ray: rc}, nil
	}
	root := &cobra.Command{Use: "kubectl-ray"}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(doctor.NewCmd(f, nil))
	root.SetOut(out)
	root.SetArgs([]string{cobra.ShellCompNoDescRequestCmd, "doctor", "-n", "ml", "r"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	want := "raycluster-a\nraycluster/raycluster-a\nraycluster-b\nraycluster/raycluster-b\nraycluster/svc-raycluster-q7x9z\nrayservice/svc\n:4\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("completion = %q, want prefix %q", out.String(), want)
	}
}

// RayJobs in every output: one failed without its cluster, one Initializing behind its cluster's
// Unschedulable head, one healthy; narrowed to one RayJob, and with -l (only the RayJobs of the
// clusters listed).
func TestRayJobOutputs(t *testing.T) {
	for _, tc := range []outputCase{
		{"rayjobs-table", []string{"-n", "jobs"}, exit.CheckFailed},
		{"rayjobs-wide", []string{"-n", "jobs", "-o", "wide"}, exit.CheckFailed},
		{"rayjobs-json", []string{"-n", "jobs", "-o", "json"}, exit.CheckFailed},
		{"rayjobs-junit", []string{"-n", "jobs", "-o", "junit"}, exit.CheckFailed},
		{"rayjobs-prometheus", []string{"-n", "jobs", "-o", "prometheus"}, exit.CheckFailed},
		{"rayjobs-target-failed", []string{"-n", "jobs", "rayjob/etl"}, exit.CheckFailed},
		{"rayjobs-target-healthy", []string{"-n", "jobs", "rayjob/daily"}, exit.OK},
		{"rayjobs-selector", []string{"-n", "jobs", "-l", "team=ml", "--fail-on", "never"}, exit.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "rayjobs", nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d; stderr: %s", r.code, tc.code, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("unexpected stderr: %s", r.stderr)
			}
			golden.Assert(t, filepath.Join("testdata", tc.name+".golden"), []byte(r.stdout))
		})
	}
}
