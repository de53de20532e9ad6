package main

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// Every watchdog Deployment: restricted securityContext, probes on the metrics port, no command
// (the image's entrypoint), and leader election exactly when more than one replica runs.
func checkDeployment(t *testing.T, name string, d appsv1.Deployment) {
	t.Helper()
	p := d.Spec.Template.Spec
	if len(p.Containers) != 1 {
		t.Fatalf("%s: %d containers", d.Name, len(p.Containers))
	}
	c := p.Containers[0]
	sc := c.SecurityContext
	switch {
	case len(c.Command) != 0:
		t.Errorf("%s: command %v; the image's entrypoint runs the binary", d.Name, c.Command)
	case p.SecurityContext == nil || p.SecurityContext.RunAsNonRoot == nil || !*p.SecurityContext.RunAsNonRoot,
		p.SecurityContext.SeccompProfile == nil || p.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: pod securityContext %+v", d.Name, p.SecurityContext)
	case sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Errorf("%s: container securityContext %+v", d.Name, sc)
	case c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port.String() != "metrics",
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port.String() != "metrics":
		t.Errorf("%s: probes %+v %+v", d.Name, c.LivenessProbe, c.ReadinessProbe)
	case len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 8080:
		t.Errorf("%s: ports %+v", d.Name, c.Ports)
	}
	args := strings.Join(c.Args, " ")
	if !strings.HasPrefix(args, "heal --watch ") || !strings.HasSuffix(args, " -o json --metrics-bind-address :8080") {
		t.Errorf("%s: args %q", d.Name, args)
	}
	elect := strings.Contains(args, "--leader-elect --lease-namespace ")
	if elect != (*d.Spec.Replicas > 1) {
		t.Errorf("%s: %d replicas, args %q: leader election must be on exactly above 1", d.Name, *d.Spec.Replicas, args)
	}
	// rollingUpdate is set in full: an upgrade to one replica (Recreate) must be able to drop it,
	// which a server-defaulted rollingUpdate blocks (the sandbox test's upgrade to 1 failed so).
	if elect && (d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate == nil ||
		d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0) {
		t.Errorf("%s: strategy %+v, want RollingUpdate with maxUnavailable 0 set", d.Name, d.Spec.Strategy)
	}
	if !elect && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("%s: one replica without a Lease must be replaced with Recreate, not %q", d.Name, d.Spec.Strategy.Type)
	}
	sel := d.Spec.Selector.MatchLabels
	for k, v := range sel {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: the selector's %s=%s is not on the pods", d.Name, k, v)
		}
	}
}

// The watchdog's rights: exactly the verbs it uses, nothing that writes RayClusters or pods
// beyond delete.
func checkRole(t *testing.T, key string, r rbacv1.ClusterRole) {
	t.Helper()
	for _, rule := range r.Rules {
		for _, v := range rule.Verbs {
			if v == "*" || ((v == "update" || v == "patch") && !slices.Equal(rule.Resources, []string{"leases"})) {
				t.Errorf("%s: verb %s on %v", key, v, rule.Resources)
			}
		}
		if slices.Equal(rule.Resources, []string{"leases"}) && slices.Contains(rule.Verbs, "update") &&
			!slices.Equal(rule.ResourceNames, []string{"kubectl-ray-heal"}) {
			t.Errorf("%s: lease update not limited to kubectl-ray-heal: %+v", key, rule)
		}
	}
}

func rulesOf(t *testing.T, got map[string]object, key string) string {
	t.Helper()
	var s []string
	for _, r := range decode[rbacv1.ClusterRole](t, got[key]).Rules {
		s = append(s, strings.Join(r.Resources, ",")+":"+strings.Join(r.Verbs, ","))
	}
	return strings.Join(s, " ")
}

func deployment(t *testing.T, got map[string]object, key string) (appsv1.Deployment, corev1.Container) {
	t.Helper()
	d := decode[appsv1.Deployment](t, got[key])
	return d, d.Spec.Template.Spec.Containers[0]
}

const baseRules = "pods:get,list,watch,delete pods/log:get rayclusters:list,watch events:create,list,watch"

// What each case of the matrix changes, document by document.
func checkCase(t *testing.T, name string, got map[string]object, notes string) {
	const dep = "Deployment ray-system/kubectl-ray-heal"
	switch name {
	case "defaults", "replicas 3":
		d, c := deployment(t, got, dep)
		args := strings.Join(c.Args, " ")
		if want := "heal --watch --yes -A --leader-elect --lease-namespace $(POD_NAMESPACE) --min-age 10s -o json --metrics-bind-address :8080"; args != want {
			t.Errorf("args %q, want %q", args, want)
		}
		if c.Image != "kubectl-ray/kubectl-ray:v0.0.1-snapshot" && !strings.HasPrefix(c.Image, "kubectl-ray/kubectl-ray:v") {
			t.Errorf("image %q", c.Image)
		}
		if r := rulesOf(t, got, "ClusterRole /kubectl-ray-heal"); r != baseRules {
			t.Errorf("ClusterRole rules %q", r)
		}
		if r := rulesOf(t, got, "Role ray-system/kubectl-ray-heal-lease"); r != "leases:create leases:get,update" {
			t.Errorf("Lease Role rules %q", r)
		}
		pdb := decode[policyv1.PodDisruptionBudget](t, got["PodDisruptionBudget ray-system/kubectl-ray-heal"])
		if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
			t.Errorf("PDB %+v", pdb.Spec)
		}
		for k, v := range pdb.Spec.Selector.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("the PDB's %s=%s is not on the pods", k, v)
			}
		}
		svc := decode[corev1.Service](t, got["Service ray-system/kubectl-ray-heal-metrics"])
		for k, v := range svc.Spec.Selector {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("the Service's %s=%s is not on the pods", k, v)
			}
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
			t.Errorf("Service ports %+v", svc.Spec.Ports)
		}
		for _, want := range []string{"kubectl -n ray-system get lease kubectl-ray-heal", "logs deploy/kubectl-ray-heal",
			"reason=RayHeadHealed", "port-forward deploy/kubectl-ray-heal 8080", "watching every namespace"} {
			if !strings.Contains(notes, want) {
				t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
			}
		}
		p := d.Spec.Template.Spec
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		if name == "replicas 3" {
			if *d.Spec.Replicas != 3 || d.Spec.Template.Annotations["a"] != "b" || p.PriorityClassName != "high" ||
				p.NodeSelector["pool"] != "system" || len(p.Tolerations) != 1 || p.Tolerations[0].Key != "k" {
				t.Errorf("replicas 3: %+v", d.Spec)
			}
			if !p.HostNetwork || p.DNSPolicy != corev1.DNSClusterFirstWithHostNet || len(env) != 3 || env["HTTPS_PROXY"] != "http://proxy.example:3128" {
				t.Errorf("hostNetwork %v, dnsPolicy %q, env %v", p.HostNetwork, p.DNSPolicy, env)
			}
		} else if p.HostNetwork || p.DNSPolicy != "" || len(env) != 2 {
			t.Errorf("defaults: hostNetwork %v, dnsPolicy %q, env %v", p.HostNetwork, p.DNSPolicy, env)
		}
	case "namespaced":
		for _, ns := range []string{"team-a", "team-b"} {
			_, c := deployment(t, got, dep+"-"+ns)
			args := strings.Join(c.Args, " ")
			if want := "heal --watch --yes --namespace " + ns + " --leader-elect --lease-namespace " + ns + " --min-age 10s --force -o json --metrics-bind-address :8080"; args != want {
				t.Errorf("args %q, want %q", args, want)
			}
			if r := rulesOf(t, got, "Role "+ns+"/kubectl-ray-heal"); r != baseRules {
				t.Errorf("Role rules in %s: %q", ns, r)
			}
			rb := decode[rbacv1.RoleBinding](t, got["RoleBinding "+ns+"/kubectl-ray-heal"])
			if rb.RoleRef.Kind != "Role" || rb.Subjects[0].Namespace != "ray-system" || rb.Subjects[0].Name != "kubectl-ray-heal" {
				t.Errorf("RoleBinding in %s: %+v", ns, rb)
			}
		}
		if r := rulesOf(t, got, "ClusterRole /kubectl-ray-heal-nodes"); r != "nodes:list,watch" {
			t.Errorf("nodes ClusterRole %q", r)
		}
		if !strings.Contains(notes, "watching team-a, team-b") || !strings.Contains(notes, "kubectl -n team-b get lease kubectl-ray-heal") {
			t.Errorf("NOTES.txt:\n%s", notes)
		}
	case "no RBAC":
		d, _ := deployment(t, got, dep)
		if d.Spec.Template.Spec.ServiceAccountName != "mine" {
			t.Errorf("serviceAccountName %q, want mine", d.Spec.Template.Spec.ServiceAccountName)
		}
	case "monitors on":
		pr := string(got["PrometheusRule ray-system/kubectl-ray-heal"].raw)
		for _, want := range []string{`"release":"prometheus"`, `"alert":"RayHealWatchdogNoLeader"`, `{{ $labels.rule }}`} {
			if !strings.Contains(pr, want) {
				t.Errorf("PrometheusRule lacks %s: %s", want, pr)
			}
		}
		for _, k := range []string{"ServiceMonitor ray-system/kubectl-ray-heal", "PodMonitor ray-system/kubectl-ray-heal"} {
			if s := string(got[k].raw); !strings.Contains(s, `"port":"metrics"`) || !strings.Contains(s, `"app.kubernetes.io/instance":"w"`) {
				t.Errorf("%s: %s", k, s)
			}
		}
	case "replicas 1":
		_, c := deployment(t, got, dep)
		args := strings.Join(c.Args, " ")
		if want := "heal --watch --dry-run -A --min-age 1m --workers 8 --stale-workers -o json --metrics-bind-address :8080"; args != want {
			t.Errorf("args %q, want %q", args, want)
		}
		if strings.Contains(notes, "get lease") || !strings.Contains(notes, "dry run") {
			t.Errorf("NOTES.txt:\n%s", notes)
		}
	case "digest":
		d, c := deployment(t, got, dep)
		if want := "registry.example.com/kubectl-ray:v9.9.9@sha256:" + strings.Repeat("a", 64); c.Image != want || c.ImagePullPolicy != "Always" {
			t.Errorf("image %q %s, want %q Always", c.Image, c.ImagePullPolicy, want)
		}
		if s := d.Spec.Template.Spec.ImagePullSecrets; len(s) != 1 || s[0].Name != "regcred" {
			t.Errorf("imagePullSecrets %+v", s)
		}
	default:
		t.Fatalf("no checks for %s", name)
	}
}
