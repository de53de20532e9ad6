package e2e

import (
	"os"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/yaml"
)

// serve-replica-fits-no-group: KubeRay's ray-service.sample.yaml with its FruitMarket deployment
// asking each replica for a GPU, which neither the head nor the small-group workers (no GPU in
// their limits) advertise. doctor -f predicts it before the apply, with the sample's own numbers
// (the head's cpu limit 2, the workers' 1); applied, the live doctor says the same of the
// RayService the v1.1.1 operator runs. That Ray then never places the replica needs Ray, which
// does not run here: the rule's facts are KubeRay's ray start parameters (docs/rules.md). The
// untouched sample stays silent. About 2 s (the RayService's cluster starting).
func TestDoctorServeReplicaFitsNoGroup(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	gpu := func(rs *rayv1.RayService) {
		cfg := rs.Spec.ServeConfigV2
		i := strings.Index(cfg, "name: FruitMarket")
		j := strings.Index(cfg[max(i, 0):], "num_cpus: 0.1")
		if i < 0 || j < 0 {
			t.Fatalf("the sample's FruitMarket deployment is not where the test expects it:\n%s", cfg)
		}
		at := i + j // FruitMarket's num_cpus: its num_gpus goes below it, as indented
		indent := at - (strings.LastIndex(cfg[:at], "\n") + 1)
		end := at + len("num_cpus: 0.1")
		rs.Spec.ServeConfigV2 = cfg[:end] + "\n" + strings.Repeat(" ", indent) + "num_gpus: 1" + cfg[end:]
	}
	data, err := os.ReadFile(h.SB.Config().SamplePath("ray-service.sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "no group of its RayCluster can hold one replica of Serve deployment fruit_app/FruitMarket (CPU 0.1, GPU 1 per replica); the groups advertise head: CPU 2, GPU 0; worker group small-group: CPU 1, GPU 0"
	for _, c := range []struct {
		name   string
		mutate func(*rayv1.RayService)
		fires  bool
	}{{"sample", nil, false}, {"gpu", gpu, true}} {
		rs := &rayv1.RayService{}
		if err := yaml.Unmarshal(data, rs); err != nil {
			t.Fatal(err)
		}
		rs.Name = c.name
		if c.mutate != nil {
			c.mutate(rs)
		}
		file := manifestFile(t, c.name, rs)
		d, res := h.doctorJSON("-f", file, "-n", h.NS)
		got := rayServiceFindings(d, c.name, "serve-replica-fits-no-group")
		switch {
		case !c.fires && (len(got) != 0 || res.Code != 0):
			t.Errorf("doctor -f on KubeRay's sample: %v, exit %d\n%s", got, res.Code, res)
		case c.fires && (len(got) != 1 || res.Code != 1 || !strings.Contains(got[0].Message, want)):
			t.Errorf("doctor -f: %v, exit %d; want one error with %q\n%s", got, res.Code, want, res)
		}
	}
	h.createRayService("gpu", gpu)
	d, res := h.doctorJSON("rayservice/gpu", "--ray=false")
	got := rayServiceFindings(d, "gpu", "serve-replica-fits-no-group")
	if len(got) != 1 || res.Code != 1 || !strings.Contains(got[0].Message, want) || got[0].Severity != "error" {
		t.Errorf("live doctor on the applied RayService: %v, exit %d; want one error with %q\n%s", got, res.Code, want, res)
	}
}

// rayServiceFindings are the findings of rule about RayService name.
func rayServiceFindings(d drDoc, name, rule string) []drFinding {
	var out []drFinding
	for _, f := range d.Findings {
		if f.Rule == rule && f.Object.Kind == "RayService" && f.Object.Name == name {
			out = append(out, f)
		}
	}
	return out
}
