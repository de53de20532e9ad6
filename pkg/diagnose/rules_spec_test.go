package diagnose

import (
	"slices"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// SpecOnly runs the spec rules alone: on fixtures with live findings (an operator that restarts no
// head, a stuck RayService upgrade, a RayJob Initializing) beside spec findings (a head without an
// ephemeral-storage request, a RayService without GCS fault tolerance: a moved rule), only the
// spec findings remain, and every one of them is still found.
func TestSpecOnly(t *testing.T) {
	for _, name := range []string{"head-restart-disabled-stuck", "rayservice-upgrade-stuck", "rayjob-initializing", "gcs-ft-off", "ray-resources-builtin"} {
		f := loadFixture(t, name)
		full := DefaultOptions()
		full.Risks = true // SpecOnly reports the risks too
		all := Diagnose(&f.snap, full)
		only := Diagnose(&f.snap, Options{SpecOnly: true})
		// spec-refused runs only under SpecOnly (live, the operator has spoken); these live
		// fixtures' RayJobs carry no cluster spec, which the operator's validation refuses.
		only.Findings = slices.DeleteFunc(only.Findings, func(fd Finding) bool { return fd.Rule == RuleSpecRefused })
		var wantSpec, live int
		for _, fd := range all.Findings {
			if specScoped(fd.Rule) {
				wantSpec++
			} else {
				live++
			}
		}
		if live == 0 && name != "gcs-ft-off" && name != "ray-resources-builtin" {
			t.Fatalf("%s: the fixture has no live finding to leave out", name)
		}
		for _, fd := range only.Findings {
			if !specScoped(fd.Rule) {
				t.Errorf("%s: SpecOnly reported %s (not of scope spec)", name, fd.Rule)
			}
		}
		if len(only.Findings) != wantSpec || wantSpec == 0 {
			t.Errorf("%s: SpecOnly found %d findings, the full run %d spec findings", name, len(only.Findings), wantSpec)
		}
		if len(only.RayJobs) != 0 || len(only.RayServices) != 0 {
			t.Errorf("%s: SpecOnly checked RayJobs or RayServices", name)
		}
	}
}

// Each spec finding names its field, relative to the RayCluster document.
func TestSpecFields(t *testing.T) {
	for _, c := range []struct{ fixture, rule, field string }{
		{"head-evictable-first", RuleHeadEvictableFirst, "spec.headGroupSpec.template.spec.containers[0].resources.requests.ephemeral-storage"},
		{"head-evictable-first-qos", RuleHeadEvictableFirst, "spec.headGroupSpec.template.spec.containers[0].resources"},
		{"memory-request-not-limit", RuleMemoryRequestNotLimit, "spec.workerGroupSpecs[1].template.spec.containers[0].resources.limits.memory"},
		{"ray-container-not-first", RuleRayContainerNotFirst, "spec.workerGroupSpecs[0].template.spec.containers[0]"},
		{"ray-resources-builtin", RuleRayResourcesBuiltin, "spec.workerGroupSpecs[0].rayStartParams.resources"},
		{"serve-head-has-cpus", RuleServeHeadHasCPUs, "spec.headGroupSpec.rayStartParams.num-cpus"},
		{"gcs-ft-off", RuleGCSFTOff, "spec.gcsFaultToleranceOptions"},
		{"image-ray-version", RuleImageRayVersion, "spec.workerGroupSpecs[0].template.spec.containers[0].image"},
		{"serve-head-not-excluded", RuleServeHeadNotExcluded, "spec.excludeHeadPodFromServeSvc"},
		{"shm-smaller-than-object-store", RuleShmSmallerThanObjectStore, "spec.workerGroupSpecs[0].template.spec.volumes[1].emptyDir.sizeLimit"},
		{"pod-resources-invalid", RulePodResourcesInvalid, "spec.workerGroupSpecs[0].template.spec.initContainers[0].resources.requests.cpu"},
		{"gcs-reconnect-timeout", RuleGCSReconnectTimeout, "spec.workerGroupSpecs[0].template.spec.containers[0].env"},
		{"serve-config-invalid", RuleServeConfigInvalid, "spec.serveConfigV2"},
		{"serve-config-camelcase", RuleServeConfigCamelCase, "spec.serveConfigV2"},
	} {
		f := loadFixture(t, c.fixture)
		var fields []string
		for _, fd := range Diagnose(&f.snap, Options{SpecOnly: true}).Findings {
			if fd.Rule == c.rule {
				fields = append(fields, fd.Field)
			}
		}
		if len(fields) != 1 || fields[0] != c.field {
			t.Errorf("%s: %s fields %q, want [%q]", c.fixture, c.rule, fields, c.field)
		}
	}
}

// The camelCase keys are named with their paths in the config; the user's own keys are not.
func TestServeConfigCamelCaseNamesKeys(t *testing.T) {
	checkDetails(t, []detailCase{
		{"serve-config-camelcase", RuleServeConfigCamelCase, "RayService ml/svc",
			[]string{"applications[0].routePrefix (Ray Serve reads route_prefix)", "applications[0].deployments[0].numReplicas (Ray Serve reads num_replicas)"},
			map[string]string{"fields": "2"}},
		{"serve-config-invalid", RuleServeConfigInvalid, "RayService ml/svc", []string{"serveConfigV2 is not YAML"}, nil},
	})
}

// serve-replica-fits-no-group names each deployment no group holds, with what a replica asks and
// what each group advertises (the head's num-cpus "0", the worker's 1500m limit rounded up as
// KubeRay rounds it, its rayStartParams memory, no GPU), and leaves out the one that fits.
func TestServeReplicaFitsNoGroupNamesDeployments(t *testing.T) {
	checkDetails(t, []detailCase{
		{"serve-replica-fits-no-group", RuleServeReplicaFitsNoGroup, "RayService ml/svc",
			[]string{"llm/Model (CPU 1, GPU 1, memory 3Gi per replica)", "llm/Tokenizer (tpu_host 1 per replica)",
				"head: CPU 0, GPU 0, memory unknown, tpu_host 0; worker group cpu: CPU 2, GPU 0, memory 2Gi, tpu_host 0"},
			map[string]string{"deployments": "2"}},
	})
	f := loadFixture(t, "serve-replica-fits-no-group")
	r := Diagnose(&f.snap, Options{})
	for _, x := range r.Findings {
		if x.Rule == RuleServeReplicaFitsNoGroup && strings.Contains(x.Message, "Router") {
			t.Errorf("Router fits the worker group (0.5 of 2 CPUs), yet: %s", x.Message)
		}
	}
}

// spec-refused quotes the operator's Event as its reconcilers format it (raycluster_controller.go,
// rayservice_controller.go, rayjob_controller.go of v1.6.2, as of v1.6.0), and says what the
// operator of the cluster the documents would be applied to does.
func TestSpecRefusedWords(t *testing.T) {
	f := loadFixture(t, "spec-refused")
	events := map[string]string{
		"RayCluster": "The RayCluster spec is invalid ml/raycluster-a: ray.io/ft-enabled annotation and GcsFaultToleranceOptions are both set. Please use only GcsFaultToleranceOptions to configure GCS fault tolerance",
		"RayService": "ml/svc: The RayService spec is invalid: spec.rayClusterConfig.headGroupSpec.headService.metadata.name should not be set",
		"RayJob":     "ml/train: The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended",
	}
	for image, want := range map[string]string{
		"quay.io/kuberay/operator:v1.1.1": "the operator here, v1.1.1, ",
		"quay.io/kuberay/operator:v1.5.0": "the operator here, v1.5.0, runs an older validation",
		"quay.io/kuberay/operator:v1.6.0": "",
		"quay.io/kuberay/operator:v1.6.1": "",
		"quay.io/kuberay/operator:v1.7.0": "the operator here is v1.7.0, whose validation has these checks and more",
	} {
		f.snap.Deployments[0].Spec.Template.Spec.Containers[0].Image = image
		got := 0
		for _, fd := range Diagnose(&f.snap, Options{SpecOnly: true}).Findings {
			if fd.Rule != RuleSpecRefused {
				continue
			}
			got++
			if fd.Evidence["event"] != events[fd.Object.Kind] || !strings.Contains(fd.Message, fd.Evidence["event"]) {
				t.Errorf("%s: event %q, want %q", fd.Object.Kind, fd.Evidence["event"], events[fd.Object.Kind])
			}
			want := want
			if strings.HasSuffix(image, "v1.1.1") && fd.Object.Kind == "RayJob" {
				want += "validates a RayJob only in part (suspend, clusterSelector, runtimeEnvYAML, activeDeadlineSeconds; it logs a refusal and records no Event), so it may start this one, and an upgrade of the operator to v1.6.0 or later refuses it"
			} else if strings.HasSuffix(image, "v1.1.1") {
				want += "does not run this validation"
			}
			if want != "" && !strings.Contains(fd.Message, want) || want == "" && strings.Contains(fd.Message, "the operator here") {
				t.Errorf("operator %s: %s", image, fd.Message)
			}
		}
		if got != 3 {
			t.Errorf("operator %s: %d spec-refused findings, want 3", image, got)
		}
	}
}

// A refusal that depends on a feature gate is judged only against a v1.5 operator, whose
// default is off, in v1.5.0's words: v1.6.0 turns RayJobDeletionPolicy on, and offline the gate
// is not known.
func TestSpecRefusedFeatureGate(t *testing.T) {
	f := loadFixture(t, "spec-refused-feature-gate")
	count := func() int {
		n := 0
		for _, fd := range Diagnose(&f.snap, Options{SpecOnly: true}).Findings {
			if fd.Rule == RuleSpecRefused {
				n++
				if !strings.Contains(fd.Message, "with its default feature gates") || fd.Evidence["validatedAs"] != "v1.5.0" || !strings.HasPrefix(fd.Evidence["operator"], "v1.5.") ||
					fd.Evidence["event"] != "ml/train: RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy" {
					t.Errorf("a gated refusal does not say so, in v1.5.0's words: %s %v", fd.Message, fd.Evidence)
				}
			}
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("v1.5.0: %d findings, want 1", n)
	}
	f.snap.Deployments[0].Spec.Template.Spec.Containers[0].Image = "quay.io/kuberay/operator:v1.5.1"
	if n := count(); n != 1 {
		t.Fatalf("v1.5.1: %d findings, want 1", n)
	}
	f.snap.Deployments[0].Spec.Template.Spec.Containers[0].Image = "quay.io/kuberay/operator:v1.6.0"
	if n := count(); n != 0 {
		t.Errorf("v1.6.0 (the gate on by default): %d findings, want none", n)
	}
	f.snap.Deployments = nil
	if n := count(); n != 0 {
		t.Errorf("offline: %d findings, want none", n)
	}
}

// Each refusal the API server would make is named, with its field; what it accepts is not.
func TestContainerResourceProblems(t *testing.T) {
	q := resource.MustParse
	for _, c := range []struct {
		name       string
		req, lim   corev1.ResourceList
		want, path string
	}{
		{"gpu in limits only", nil, corev1.ResourceList{"nvidia.com/gpu": q("1")}, "", ""},
		{"gpu equal", corev1.ResourceList{"nvidia.com/gpu": q("2")}, corev1.ResourceList{"nvidia.com/gpu": q("2")}, "", ""},
		{"cpu below its limit", corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"cpu": q("2")}, "", ""},
		{"cpu without a limit", corev1.ResourceList{"cpu": q("1")}, nil, "", ""},
		{"kubernetes.io domain overcommits", corev1.ResourceList{"example.kubernetes.io/x": q("1")}, nil, "", ""},
		{"gpu unequal", corev1.ResourceList{"nvidia.com/gpu": q("1")}, corev1.ResourceList{"nvidia.com/gpu": q("2")},
			"requests 1 nvidia.com/gpu with a limit of 2", "c.resources.requests.nvidia.com/gpu"},
		{"gpu without a limit", corev1.ResourceList{"nvidia.com/gpu": q("1")}, nil, "requests 1 nvidia.com/gpu with no limit", "c.resources.limits.nvidia.com/gpu"},
		{"hugepages unequal", corev1.ResourceList{"hugepages-2Mi": q("2Mi")}, corev1.ResourceList{"hugepages-2Mi": q("4Mi")},
			"requests 2Mi hugepages-2Mi with a limit of 4Mi", "c.resources.requests.hugepages-2Mi"},
		{"memory above its limit", corev1.ResourceList{"memory": q("2Gi")}, corev1.ResourceList{"memory": q("1Gi")},
			"requests 2Gi memory, above its limit of 1Gi", "c.resources.requests.memory"},
		{"half a gpu", nil, corev1.ResourceList{"nvidia.com/gpu": q("500m")}, "limits 500m of nvidia.com/gpu is not a whole number", "c.resources.limits.nvidia.com/gpu"},
	} {
		ps := containerResourceProblems(&corev1.Container{Name: "ray", Resources: corev1.ResourceRequirements{Requests: c.req, Limits: c.lim}}, "c")
		switch {
		case c.want == "" && len(ps) != 0:
			t.Errorf("%s: accepted by the API server, got %+v", c.name, ps)
		case c.want != "" && (len(ps) != 1 || !strings.Contains(ps[0].text, c.want) || ps[0].field != c.path):
			t.Errorf("%s: %+v, want one problem %q at %s", c.name, ps, c.want, c.path)
		}
	}
}

// A v1.5 operator with its default gates refuses a suspended worker group in a RayJob's cluster
// spec, in v1.5.0's words; the validation of v1.6.0 and later accepts it.
func TestSpecRefusedSuspendedGroupOnV15(t *testing.T) {
	f := loadFixture(t, "spec-refused-feature-gate")
	j := &f.snap.Jobs[0]
	j.Spec.DeletionStrategy = nil
	j.Spec.RayClusterSpec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "small", Suspend: ptr.To(true),
		Template: j.Spec.RayClusterSpec.HeadGroupSpec.Template}}
	var events []string
	for _, fd := range Diagnose(&f.snap, Options{SpecOnly: true}).Findings {
		if fd.Rule == RuleSpecRefused {
			events = append(events, fd.Evidence["event"])
		}
	}
	if want := "ml/train: worker group small can be suspended only when the RayJobDeletionPolicy feature gate is enabled"; len(events) != 1 || events[0] != want {
		t.Errorf("v1.5.0: events %q, want %q", events, want)
	}
	f.snap.Deployments[0].Spec.Template.Spec.Containers[0].Image = "quay.io/kuberay/operator:v1.6.0"
	for _, fd := range Diagnose(&f.snap, Options{SpecOnly: true}).Findings {
		if fd.Rule == RuleSpecRefused {
			t.Errorf("v1.6.0 (the gate on): %s", fd.Message)
		}
	}
}
