package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// The RBAC the chart grants is exactly what the watchdog uses, in both directions:
//   - enough: the chart's ServiceAccount, Roles, ClusterRoles, bindings and Lease are applied to
//     the sandbox and the real binary runs with the Deployment's own arguments, as that
//     ServiceAccount; it becomes leader on the Lease, watches, heals an evicted head (KubeRay
//     v1.1.1 then creates a new one), records its Events and counts the heal in /metrics, and
//     nothing it prints says forbidden;
//   - nothing more: each verb of each rule is removed in turn (the Role updated in the sandbox)
//     and the watchdog run again the same way; each run must say forbidden, naming the verb and
//     the resource (at start, or when it first needs the verb). A verb the watchdog heals
//     without is one it does not need, and the test fails naming it. A single heal needs no
//     Events read: without list of Events the watchdog says so at start, and checkBackOff shows
//     what it loses (it joins a head recreate loop it backs off from with the chart's rights).
//
// The watchdog runs with the sandbox's admin kubeconfig impersonating the ServiceAccount (--as
// system:serviceaccount:NS:NAME): the API server then authorizes every request as that
// ServiceAccount (its user name and groups, system:serviceaccounts and
// system:serviceaccounts:NS, which the impersonation filter adds), through the same RBAC
// authorizer and rules as a request with its token; nothing of the admin's rights remains. The
// arguments are the Deployment's but for --min-age (0s, to heal at once) and
// --metrics-bind-address (127.0.0.1:0). The default values are checked (-A, a ClusterRole), and
// the namespaced case (a Role in each watched namespace, --force's nodes ClusterRole): there the
// team-a watchdog is run for each removal, and team-b's Roles must be team-a's.
func TestWatchdogRBAC(t *testing.T) {
	kc := sandboxUp(t, "v1.1.1")
	bin := buildWatchdog(t)
	s := newSandboxClients(t, kc)
	start := time.Now()
	for _, c := range matrix {
		if c.name != "defaults" && c.name != "namespaced" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			variantStart := time.Now()
			s.checkRBAC(t, bin, kc, c.values)
			t.Logf("%s: %s", c.name, time.Since(variantStart).Round(100*time.Millisecond))
		})
	}
	t.Logf("the watchdog's RBAC, both cases: %s", time.Since(start).Round(100*time.Millisecond))
}

// sandboxClients are the admin's clients of the sandbox.
type sandboxClients struct {
	ctx    context.Context
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newSandboxClients(t *testing.T, kc string) *sandboxClients {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return &sandboxClients{ctx: ctx, cs: cs, dyn: dynamic.NewForConfigOrDie(cfg),
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))}
}

// instance is one watchdog Deployment of the rendering, run as a process.
type instance struct {
	name      string
	args      []string // the container's, changed as TestWatchdogRBAC says, after --kubeconfig and --as
	user      string   // system:serviceaccount:NS:NAME
	clusterNS string   // where its RayCluster is
	leaseNS   string   // "" without leader election
}

// grant is one verb on one resource (and name) that a Role or ClusterRole gives.
type grant struct {
	group, resource, name, verb string
}

func (g grant) String() string {
	r := g.resource
	if g.group != "" {
		r += "." + g.group
	}
	if g.name != "" {
		r += "/" + g.name
	}
	return g.verb + " " + r
}

// grants splits rules into single grants, in order.
func grants(rules []rbacv1.PolicyRule) []grant {
	var out []grant
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, n := range names {
					for _, v := range r.Verbs {
						out = append(out, grant{g, res, n, v})
					}
				}
			}
		}
	}
	return out
}

// rulesWithout is rules less one grant, as one rule per group, resource and name.
func rulesWithout(rules []rbacv1.PolicyRule, drop grant) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range grants(rules) {
		if g == drop {
			continue
		}
		i := slices.IndexFunc(out, func(r rbacv1.PolicyRule) bool {
			return r.APIGroups[0] == g.group && r.Resources[0] == g.resource && (len(r.ResourceNames) == 0) == (g.name == "") &&
				(g.name == "" || r.ResourceNames[0] == g.name)
		})
		if i < 0 {
			r := rbacv1.PolicyRule{APIGroups: []string{g.group}, Resources: []string{g.resource}}
			if g.name != "" {
				r.ResourceNames = []string{g.name}
			}
			out = append(out, r)
			i = len(out) - 1
		}
		out[i].Verbs = append(out[i].Verbs, g.verb)
	}
	return out
}

// role is one Role or ClusterRole of the rendering.
type role struct {
	obj   object
	rules []rbacv1.PolicyRule
}

func (r role) key() string {
	return r.obj.Kind + " " + strings.TrimPrefix(r.obj.Metadata.Namespace+"/", "/") + r.obj.Metadata.Name
}

func (s *sandboxClients) checkRBAC(t *testing.T, bin, kc string, values map[string]any) {
	objs, _ := renderObjects(t, values)
	var applied []object
	var roles []role
	var insts []instance
	namespaces := map[string]bool{"ray-system": true}
	for _, o := range objs {
		switch o.Kind {
		case "ServiceAccount", "ClusterRoleBinding", "RoleBinding", "Lease":
			applied = append(applied, o)
		case "ClusterRole", "Role":
			applied = append(applied, o)
			roles = append(roles, role{o, decode[rbacv1.ClusterRole](t, o).Rules})
		case "Deployment":
			insts = append(insts, deploymentInstance(t, kc, decode[appsv1.Deployment](t, o)))
		}
		if o.Metadata.Namespace != "" {
			namespaces[o.Metadata.Namespace] = true
		}
	}
	for _, in := range insts {
		namespaces[in.clusterNS] = true
	}
	for ns := range namespaces {
		if _, err := s.cs.CoreV1().Namespaces().Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, o := range applied {
		s.apply(t, o.raw)
	}
	// The next case's ServiceAccount has the same name: none of this case's rights may stay.
	t.Cleanup(func() {
		for _, o := range applied {
			if o.Kind != "Lease" && o.Kind != "ServiceAccount" {
				s.delete(t, o)
			}
		}
		s.waitAllowed(t, insts[0].user, "", grant{"ray.io", "rayclusters", "", "list"}, false)
	})
	for _, in := range insts {
		createRayCluster(s.ctx, t, s.dyn, in.clusterNS)
	}
	for _, r := range roles {
		for _, g := range grants(r.rules) {
			s.waitAllowed(t, insts[0].user, r.obj.Metadata.Namespace, g, true)
		}
	}

	// Enough: every watchdog heals, and nothing is forbidden.
	full := s.runWatchdogs(t, bin, insts)
	for i, res := range full {
		in := insts[i]
		switch {
		case res.forbidden != "":
			t.Errorf("%s: with the chart's RBAC the watchdog says: %s", in.name, res.forbidden)
		case !res.healed:
			t.Errorf("%s: no heal with the chart's RBAC (exit %d):\n%s", in.name, res.code, res.w.output())
		case res.code != 0:
			t.Errorf("%s: exit %d on SIGTERM:\n%s", in.name, res.code, res.w.output())
		case len(res.w.records("level", "error")) > 0:
			t.Errorf("%s: error lines:\n%s", in.name, res.w.output())
		case in.leaseNS != "" && res.leaseHolder != res.identity:
			t.Errorf("%s: while it led, the Lease %s/kubectl-ray-heal was held by %q, not by the watchdog (%q)", in.name, in.leaseNS, res.leaseHolder, res.identity)
		case in.leaseNS != "" && s.leaseHolder(t, in.leaseNS) != "":
			t.Errorf("%s: after SIGTERM the Lease is still held by %q", in.name, s.leaseHolder(t, in.leaseNS))
		}
		if t.Failed() {
			return
		}
		// The operator creates a new head for the one the watchdog deleted: the delete was real.
		if h := head(s.ctx, t, s.cs, in.clusterNS); h.UID == res.evicted.UID {
			t.Errorf("%s: the evicted head %s is still there", in.name, h.Name)
		}
	}
	t.Logf("with the chart's RBAC: %d watchdog(s) led, healed a head each, recorded its Events and counted it, nothing forbidden (%s)",
		len(insts), full[0].took.Round(100*time.Millisecond))

	// Nothing more: each grant removed in turn, the first watchdog run again.
	first := insts[0]
	defer func() {
		if t.Failed() {
			return
		}
		i := slices.IndexFunc(roles, func(r role) bool {
			return slices.Contains(grants(r.rules), grant{"", "events", "", "list"}) && (r.obj.Kind == "ClusterRole" || r.obj.Metadata.Namespace == first.clusterNS)
		})
		if i < 0 {
			t.Fatalf("no role grants list events to %s", first.name)
		}
		s.checkBackOff(t, bin, first, roles[i])
	}()
	for _, r := range roles {
		if ns := r.obj.Metadata.Namespace; ns != "" && ns != first.clusterNS && ns != first.leaseNS && ns != "ray-system" {
			// Another watched namespace's Role: the same template, so the same rules as the first's.
			twin := slices.IndexFunc(roles, func(o role) bool {
				return o.obj.Kind == r.obj.Kind && o.obj.Metadata.Name == r.obj.Metadata.Name && o.obj.Metadata.Namespace == first.clusterNS
			})
			if twin < 0 || !slices.Equal(grants(roles[twin].rules), grants(r.rules)) {
				t.Errorf("%s: not the same rules as in %s, whose removals are tested", r.key(), first.clusterNS)
			}
			continue
		}
		for _, g := range grants(r.rules) {
			res := s.runWithout(t, bin, first, r, g)
			switch {
			case res.forbidden != "" && strings.Contains(res.forbidden, "cannot "+g.verb+" ") && strings.Contains(res.forbidden, g.resource):
				t.Logf("without %s in %s: %s (after %s)", g, r.key(), res.forbidden, res.took.Round(100*time.Millisecond))
			case res.forbidden != "":
				t.Errorf("without %s in %s the watchdog says forbidden, but not that it cannot %s %s: %s", g, r.key(), g.verb, g.resource, res.forbidden)
			case res.healed:
				t.Errorf("%s in %s can be removed: the watchdog healed without it and nothing was forbidden; the watchdog does not need it, remove it from the chart", g, r.key())
			default:
				t.Errorf("without %s in %s the watchdog neither healed nor said forbidden (exit %d):\n%s", g, r.key(), res.code, res.w.output())
			}
		}
	}
}

// deploymentInstance turns a rendered watchdog Deployment into the process the test runs.
func deploymentInstance(t *testing.T, kc string, d appsv1.Deployment) instance {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	in := instance{name: d.Name, user: "system:serviceaccount:" + d.Namespace + ":" + d.Spec.Template.Spec.ServiceAccountName,
		args: []string{"--kubeconfig", kc, "--as", "system:serviceaccount:" + d.Namespace + ":" + d.Spec.Template.Spec.ServiceAccountName}}
	for i := 0; i < len(c.Args); i++ {
		a := strings.ReplaceAll(c.Args[i], "$(POD_NAMESPACE)", d.Namespace)
		switch {
		case i > 0 && c.Args[i-1] == "--min-age":
			a = "0s"
		case i > 0 && c.Args[i-1] == "--metrics-bind-address":
			a = "127.0.0.1:0"
		case i > 0 && c.Args[i-1] == "--namespace":
			in.clusterNS = a
		case i > 0 && c.Args[i-1] == "--lease-namespace":
			in.leaseNS = a
		}
		in.args = append(in.args, a)
	}
	if in.clusterNS == "" {
		in.clusterNS = "rbac-all" // -A: any namespace
	}
	return in
}

// apply creates the object or replaces what is there.
func (s *sandboxClients) apply(t *testing.T, raw []byte) {
	t.Helper()
	var u unstructured.Unstructured
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	ri := s.resource(t, &u)
	old, err := ri.Get(s.ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = ri.Create(s.ctx, &u, metav1.CreateOptions{})
	case err == nil:
		u.SetResourceVersion(old.GetResourceVersion())
		_, err = ri.Update(s.ctx, &u, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func (s *sandboxClients) delete(t *testing.T, o object) {
	var u unstructured.Unstructured
	if err := json.Unmarshal(o.raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	if err := s.resource(t, &u).Delete(s.ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

func (s *sandboxClients) resource(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return s.dyn.Resource(m.Resource).Namespace(u.GetNamespace())
	}
	return s.dyn.Resource(m.Resource)
}

// waitAllowed waits until the API server's authorizer answers allowed for user and g in ns ("":
// cluster-wide): a Role's change reaches the authorizer through its informer, a moment later.
func (s *sandboxClients) waitAllowed(t *testing.T, user, ns string, g grant, allowed bool) {
	t.Helper()
	var last bool
	err := wait.PollUntilContextTimeout(s.ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		sar, err := s.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + strings.Split(user, ":")[2], "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: g.verb, Group: g.group, Resource: g.resource, Name: g.name},
		}}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		last = sar.Status.Allowed
		return last == allowed, nil
	})
	if err != nil {
		t.Fatalf("the authorizer still answers allowed=%v for %s %s in %q: %v", last, user, g, ns, err)
	}
}

func (s *sandboxClients) leaseHolder(t *testing.T, ns string) string {
	t.Helper()
	l, err := s.cs.CoordinationV1().Leases(ns).Get(s.ctx, "kubectl-ray-heal", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// runWithout runs in with g removed from r, then puts r back.
func (s *sandboxClients) runWithout(t *testing.T, bin string, in instance, r role, g grant) runResult {
	t.Helper()
	var u map[string]any
	if err := json.Unmarshal(r.obj.raw, &u); err != nil {
		t.Fatal(err)
	}
	u["rules"] = rulesWithout(r.rules, g)
	less, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, less)
	s.waitAllowed(t, in.user, r.obj.Metadata.Namespace, g, false)
	res := s.runWatchdogs(t, bin, []instance{in})[0]
	s.apply(t, r.obj.raw)
	s.waitAllowed(t, in.user, r.obj.Metadata.Namespace, g, true)
	return res
}

// runResult is what one watchdog did in a run.
type runResult struct {
	w         *watchdogProc
	evicted   corev1.Pod
	healed    bool
	forbidden string // its first line that says forbidden
	code      int
	took      time.Duration
	// identity is the one it became leader as; leaseHolder the Lease's holder then.
	identity, leaseHolder string
}

// runWatchdogs runs the instances at once. Once each watches, the head of its RayCluster is
// evicted (played); the run ends when each has healed it (deleted it, recorded both Events,
// counted it in /metrics, and, with leader election, led), or when one says forbidden or exits,
// or after 60 s. Then each is stopped with SIGTERM.
func (s *sandboxClients) runWatchdogs(t *testing.T, bin string, insts []instance) []runResult {
	t.Helper()
	res := make([]runResult, len(insts))
	evictedOnce := make([]bool, len(insts))
	for i, in := range insts {
		// A run that stopped at forbidden may have left its head evicted: then the watchdog
		// finds it in its first LIST, and no other head is evicted.
		if h := head(s.ctx, t, s.cs, in.clusterNS); evicted(&h) {
			res[i].evicted, evictedOnce[i] = h, true
		}
		res[i].w = startWatchdog(t, bin, in.name, in.args)
	}
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	for {
		done, stop := 0, false
		for i, in := range insts {
			r := &res[i]
			if f := forbiddenLine(r.w.output()); f != "" {
				r.forbidden, stop = f, true
			}
			if r.w.exited() {
				stop = true
			}
			if !evictedOnce[i] && len(r.w.records("msg", "watching")) > 0 {
				r.evicted, evictedOnce[i] = evictedHead(s.ctx, t, s.cs, in.clusterNS), true
			}
			if evictedOnce[i] && !r.healed {
				r.healed = s.healed(r, in)
			}
			if r.healed {
				done++
			}
		}
		if stop || done == len(insts) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, in := range insts {
		r := &res[i]
		r.took = time.Since(start)
		if r.healed && in.leaseNS != "" {
			r.leaseHolder = s.leaseHolder(t, in.leaseNS)
		}
		r.code = r.w.stop()
		if r.forbidden == "" {
			r.forbidden = forbiddenLine(r.w.output())
		}
	}
	return res
}

// healed is whether the watchdog has done all of one heal of r.evicted.
func (s *sandboxClients) healed(r *runResult, in instance) bool {
	if len(r.w.records("result", "deleted", "pod", r.evicted.Name)) == 0 {
		return false
	}
	if in.leaseNS != "" {
		led := r.w.records("msg", "became leader; acting")
		if len(led) == 0 {
			return false
		}
		r.identity, _ = led[0]["identity"].(string)
	}
	onPod, onCluster, err := healEvents(s.ctx, s.cs, r.evicted)
	if err != nil || onPod != 1 || onCluster != 1 {
		return false
	}
	addr := r.w.metricsAddr()
	if addr == "" {
		return false
	}
	m, err := scrape(s.ctx, addr)
	if err != nil {
		return false
	}
	v, _ := sampleValue(m, "kubectl_ray_heal_heals_total", `result="deleted"`, `rule="head-evicted"`)
	return v == "1"
}

// forbiddenLine is the first line of out that says forbidden, "" if none.
func forbiddenLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(strings.ToLower(l), "forbidden") {
			return l
		}
	}
	return ""
}

// checkBackOff is what list and watch of Events are for: the back-off from a head recreate loop
// (kuberay #4272), which no single heal shows. With the chart's rights the watchdog heals the
// head of in's RayCluster as it is evicted again and again (the kubelet's part played), until the
// deletes it recorded make a loop: then it backs off, logs why and records RayHealBackedOff.
// With list of Events removed it deletes that head anyway: it joins the loop it could not see.
// It runs last: the RayCluster then stays in its loop for half an hour (RecreateLoopWindow).
func (s *sandboxClients) checkBackOff(t *testing.T, bin string, in instance, r role) {
	t.Helper()
	w := startWatchdog(t, bin, in.name, in.args)
	if _, ok := w.waitRecord(30*time.Second, "msg", "watching"); !ok {
		t.Fatalf("%s: not watching:\n%s", in.name, w.output())
	}
	var looping corev1.Pod
	for turn := 1; looping.Name == ""; turn++ {
		if turn > 5 {
			t.Fatalf("%s: no back-off after %d heals in a row:\n%s", in.name, turn-1, w.output())
		}
		p := evictedHead(s.ctx, t, s.cs, in.clusterNS)
		deadline := time.Now().Add(30 * time.Second)
		for looping.Name == "" && len(w.records("result", "deleted", "pod", p.Name)) == 0 {
			if len(w.records("msg", "not healable", "rule", "head-recreate-loop", "object", p.Name)) > 0 {
				looping = p
			} else if time.Now().After(deadline) || w.exited() {
				t.Fatalf("%s: evicted head %s neither deleted nor backed off from:\n%s", in.name, p.Name, w.output())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	err := wait.PollUntilContextTimeout(s.ctx, 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := s.cs.CoreV1().Events(in.clusterNS).List(ctx, metav1.ListOptions{FieldSelector: "reason=RayHealBackedOff"})
		return err == nil && len(l.Items) > 0, nil
	})
	if err != nil {
		t.Errorf("%s: backed off from %s, but recorded no RayHealBackedOff Event", in.name, looping.Name)
	}
	if f := forbiddenLine(w.output()); f != "" || w.stop() != 0 {
		t.Errorf("%s: the back-off run: %s\n%s", in.name, f, w.output())
	}
	t.Logf("with the chart's RBAC the watchdog backs off from the head recreate loop of %s/rbac at head %s", in.clusterNS, looping.Name)

	g := grant{"", "events", "", "list"}
	var u map[string]any
	if err := json.Unmarshal(r.obj.raw, &u); err != nil {
		t.Fatal(err)
	}
	u["rules"] = rulesWithout(r.rules, g)
	less, _ := json.Marshal(u)
	s.apply(t, less)
	s.waitAllowed(t, in.user, r.obj.Metadata.Namespace, g, false)
	defer func() {
		s.apply(t, r.obj.raw)
		s.waitAllowed(t, in.user, r.obj.Metadata.Namespace, g, true)
	}()
	blind := startWatchdog(t, bin, in.name, in.args)
	if _, ok := blind.waitRecord(30*time.Second, "result", "deleted", "pod", looping.Name); !ok {
		t.Errorf("%s: without %s in %s the watchdog did not delete the looping head %s:\n%s", in.name, g, r.key(), looping.Name, blind.output())
	} else {
		t.Logf("without %s in %s the watchdog deletes the head %s it backs off from with it", g, r.key(), looping.Name)
	}
	blind.stop()
}
