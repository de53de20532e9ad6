package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// createRayService creates KubeRay's ray-service.sample.yaml named name, changed by mutate, and
// waits for the operator to create its RayCluster with the head Running; it returns the cluster.
func (h *H) createRayService(name string, mutate func(*rayv1.RayService)) (string, corev1.Pod) {
	h.T.Helper()
	data, err := os.ReadFile(h.SB.Config().SamplePath("ray-service.sample.yaml"))
	if err != nil {
		h.T.Fatal(err)
	}
	rs := &rayv1.RayService{}
	if err := yaml.Unmarshal(data, rs); err != nil {
		h.T.Fatal(err)
	}
	rs.Name, rs.Namespace = name, h.NS
	if mutate != nil {
		mutate(rs)
	}
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	var cluster string
	h.WaitFor("RayService "+name+" to get a RayCluster", 60*time.Second, func() (bool, error) {
		got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cluster = got.Status.PendingServiceStatus.RayClusterName
		if cluster == "" {
			cluster = got.Status.ActiveServiceStatus.RayClusterName
		}
		return cluster != "", nil
	})
	return cluster, h.WaitClusterRunning(cluster, 90*time.Second)
}

// The RayService rules, with KubeRay v1.1.1 reconciling the RayService (it creates the RayCluster).
// What the operator does next needs Ray's dashboard, which does not run here: once Serve is
// healthy, v1.1.1 creates the serve Service and labels a head whose proxy is healthy
// ray.io/serve=true. Both are played through the API exactly as v1.1.1 writes them
// (common.BuildServeService, rayservice_controller.go updateHeadPodServeLabel).
func TestDoctorRayServiceRules(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	cluster, head := h.createRayService("shop", nil)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-serve-svc", Namespace: h.NS, Labels: map[string]string{
			"ray.io/originated-from-cr-name": "shop", "ray.io/originated-from-crd": "RayService", "ray.io/serve": "shop-serve"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"ray.io/cluster": cluster, "ray.io/serve": "true"},
			Ports:    []corev1.ServicePort{{Name: "serve", Port: 8000, TargetPort: intstr.FromInt32(8000)}},
		},
	}
	if _, err := h.Kube.CoreV1().Services(h.NS).Create(h.Ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Before the head carries ray.io/serve=true, the Service does not select it.
	d, _ := h.doctorJSON("rayservice/shop", "--ray=false")
	wantRules(t, d, cluster)
	patch := []byte(`{"metadata":{"labels":{"ray.io/serve":"true"}}}`)
	if _, err := h.Kube.CoreV1().Pods(h.NS).Patch(h.Ctx, head.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// A tuned RayService: num-cpus 0 on the head and GCS fault tolerance on (annotation).
	tuned, _ := h.createRayService("tuned", func(rs *rayv1.RayService) {
		rs.Annotations = map[string]string{"ray.io/ft-enabled": "true"}
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams["num-cpus"] = "0"
	})

	d, res := h.doctorJSON()
	if res.Code != 0 {
		t.Fatalf("warnings and infos must not fail --fail-on error: %s", res)
	}
	wantRules(t, d, cluster, rule("serve-head-in-service", "service", "shop-serve-svc"))
	wantRules(t, d, tuned)
	for _, r := range d.specRules(tuned) {
		if strings.HasPrefix(r, "serve-head-has-cpus ") || strings.HasPrefix(r, "gcs-ft-off ") {
			t.Errorf("tuned RayService (num-cpus 0, GCS FT on): %s fired", r)
		}
	}
	in := d.finding(t, cluster, "serve-head-in-service")
	wantContains(t, "message", in.Message, "serve Service shop-serve-svc sends traffic to head pod "+head.Name, "502", "kuberay #1153")
	wantContains(t, "remedy", in.Remedy, "excludeHeadPodFromServeSvc: true on RayService shop")
	cpus := d.finding(t, cluster, "serve-head-has-cpus")
	wantContains(t, "message", cpus.Message, "(RayService shop) advertises num-cpus unset")
	if d.finding(t, cluster, "gcs-ft-off").Severity != "info" {
		t.Errorf("gcs-ft-off is not info")
	}
	for _, c := range d.Clusters {
		if c.Owner == nil || c.Owner.Kind != "RayService" {
			t.Errorf("cluster %s: owner %+v", c.Name, c.Owner)
		}
	}
	if r := h.Run("doctor", "--fail-on", "warning"); r.Code != 1 {
		t.Errorf("--fail-on warning: %s", r)
	}

	// Through kubectl's plugin discovery: `kubectl ray doctor` finds kubectl-ray on PATH and gives
	// the same report as the binary run directly.
	viaKubectl := h.Kubectl("ray", "doctor", "rayservice/shop", "-n", h.NS)
	direct := h.Run("doctor", "rayservice/shop")
	if viaKubectl.Code != 0 || viaKubectl.Stdout != direct.Stdout || !strings.Contains(viaKubectl.Stdout, "serve-head-in-service") {
		t.Fatalf("kubectl ray doctor:\n%s\ndirect:\n%s", viaKubectl, direct)
	}
	kj := h.Kubectl("ray", "doctor", "-n", h.NS, "-o", "json")
	var kd drDoc
	if err := json.Unmarshal([]byte(kj.Stdout), &kd); err != nil || kd.Kind != "DoctorReport" {
		t.Fatalf("kubectl ray doctor -o json: %v\n%s", err, kj)
	}
	if strings.Join(kd.rules(cluster), ",") != strings.Join(d.rules(cluster), ",") {
		t.Fatalf("via kubectl %v, direct %v", kd.rules(cluster), d.rules(cluster))
	}

	// junit: one suite per cluster plus the operator's, one case per rule; with --fail-on warning
	// the two warnings fail and gcs-ft-off (info) does not.
	ju := h.Run("doctor", "-o", "junit", "--fail-on", "warning")
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(ju.Stdout), &suites); err != nil || ju.Code != 1 {
		t.Fatalf("junit: %v\n%s", err, ju)
	}
	failed := map[string][]string{}
	for _, s := range suites.Suites {
		if len(s.Cases) == 0 {
			t.Errorf("suite %s has no testcase", s.Name)
		}
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed[s.Name] = append(failed[s.Name], c.Name)
			}
		}
	}
	// The operator, the two clusters, and the two RayServices themselves (rayservice-no-cluster
	// passes: each has its cluster).
	if len(suites.Suites) != 5 || len(failed) != 2 || strings.Join(failed[h.NS+"/"+cluster], ",") != "serve-head-in-service,serve-head-has-cpus" ||
		strings.Join(failed["kuberay-operator"], ",") != "operator-outdated" || len(failed[h.NS+"/"+tuned]) != 0 {
		t.Fatalf("junit failures %v (suites %d)", failed, len(suites.Suites))
	}
}

// Secrets: a head with REDIS_PASSWORD in its env, a Redis address with a password and a
// redis-password start parameter. Its eviction (kubelet played, with a message echoing all three)
// makes doctor quote it; no output format carries any of the values, though the pod in the API does.
func TestDoctorNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	const pw, uriPw, startPw = "s3cr3t-env-Value", "uriPassw0rd", "startParamPw9"
	h.CreateRayCluster("vault", func(rc *rayv1.RayCluster) {
		rc.Annotations = map[string]string{"ray.io/ft-enabled": "true"}
		if rc.Spec.HeadGroupSpec.RayStartParams == nil {
			rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{}
		}
		rc.Spec.HeadGroupSpec.RayStartParams["redis-password"] = startPw
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "REDIS_PASSWORD", Value: pw},
			corev1.EnvVar{Name: "RAY_REDIS_ADDRESS", Value: "redis://default:" + uriPw + "@redis.example:6379"})
	})
	head := h.WaitClusterRunning("vault", 90*time.Second)
	spec, _ := json.Marshal(head.Spec)
	for _, s := range []string{pw, uriPw, startPw} {
		if !strings.Contains(string(spec), s) {
			t.Fatalf("the head's spec lacks %q: the test would prove nothing", s)
		}
	}
	evicted, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "memory")
	if err != nil {
		t.Fatal(err)
	}
	// doctor quotes the kubelet's message, which a real kubelet can fill with a command line: make
	// it echo every secret (the kubelet's part, played), so the redactor is what keeps them out.
	evicted.Status.Message = "The node was low on resource: memory. ray start --redis-password=" + startPw +
		" --address=redis://default:" + uriPw + "@redis.example:6379 env " + pw + " "
	if _, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, evicted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"table", "wide", "json", "yaml", "junit"} {
		res := h.Run("doctor", "-o", o, "--fail-on", "never")
		if res.Code != 0 || !strings.Contains(res.Stdout, "head-evicted") || !strings.Contains(res.Stdout, "[redacted]") {
			t.Fatalf("-o %s: want the head-evicted finding quoting the message with [redacted] in it: %s", o, res)
		}
		for _, s := range []string{pw, uriPw, startPw} {
			if strings.Contains(res.Stdout, s) || strings.Contains(res.Stderr, s) {
				t.Errorf("-o %s prints the secret %q", o, s)
			}
		}
	}
}
