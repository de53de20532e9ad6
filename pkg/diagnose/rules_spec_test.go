package diagnose

import (
	"testing"
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
