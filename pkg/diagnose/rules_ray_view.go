package diagnose

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// The rules that compare Ray's own view (the head's dashboard, read by doctor --ray) with the
// Kubernetes view. They run only on clusters whose dashboard was asked (Snapshot.Ray); each
// says what Ray said, in Ray's words.
const (
	// RuleRayDashboardUnreachable: doctor was asked to read Ray's view and could not: no head
	// Running, the port-forward refused (RBAC: create pods/portforward), a timeout, or an HTTP
	// error. Nothing is then claimed about Ray's health.
	RuleRayDashboardUnreachable = "ray-dashboard-unreachable"
	// RuleRayDashboardAuth: the head's Ray asks for a token (Ray's token authentication, KubeRay
	// authOptions) and doctor could not present it: RBAC refused get on its Secret, the Secret
	// or its key is missing, the token comes from a source doctor does not read (Kubernetes token
	// mode), or the dashboard refused the token (HTTP 401 or 403). Nothing is then claimed about
	// Ray's health: without it a cluster whose Ray marks nodes dead looked healthy.
	RuleRayDashboardAuth = "ray-dashboard-auth"
	// RuleRayGCSUnhealthy: the dashboard answers, but its GCS health check fails: the cluster's
	// control plane is down while the head pod may be Running and Ready.
	RuleRayGCSUnhealthy = "ray-gcs-unhealthy"
	// RuleRayNodeDead: Ray has marked the node of a Running pod DEAD, and no live node has the
	// pod's IP: the pod's raylet lost the GCS and did not come back (kuberay #1141).
	RuleRayNodeDead = "ray-node-dead"
	// RuleRayPodUnregistered: a pod Running and Ready for RayRegisterGrace is not in Ray's node
	// table at all: its raylet never joined this head (a wrong head address, a Ray version
	// mismatch, a NetworkPolicy).
	RuleRayPodUnregistered = "ray-pod-unregistered"
	// RuleRayVersionMismatch: the head runs a Ray version other than spec.rayVersion, or a worker's
	// image carries another version than the head's: Ray refuses mismatched nodes.
	RuleRayVersionMismatch = "ray-version-mismatch"
	// RuleServeAppFailed: a Serve application is DEPLOY_FAILED or UNHEALTHY, with Ray's message
	// (kuberay #5148: a RayService serving nothing while its pods are Ready).
	RuleServeAppFailed = "serve-app-failed"
	// RuleServeAppDeploying: a Serve application has been DEPLOYING for ServeDeployingTooLong.
	RuleServeAppDeploying = "serve-app-deploying"
	// RuleRayJobFailedInRay: the Ray job of a RayJob on this cluster (status.jobId, Ray's
	// submission_id) is FAILED or STOPPED in Ray's job table: Ray's own error type and message,
	// which explain a failed RayJob, and a RayJob the operator still calls Running.
	RuleRayJobFailedInRay = "ray-job-failed"
	// RuleRayDemandInfeasible: Ray's autoscaler has resource requests waiting that no group of
	// the cluster (the head's included) can ever provide, by the Ray resources each declares:
	// they wait forever, and the autoscaler launches nothing for them.
	RuleRayDemandInfeasible = "ray-demand-infeasible"
)

// rayView is Ray's view of the cluster, when it was asked.
func (ix *index) rayView(c *clusterView) *rayapi.View {
	if ix.rayViews == nil {
		ix.rayViews = make(map[string]*rayapi.View, len(ix.s.Ray))
		for i := range ix.s.Ray {
			v := &ix.s.Ray[i]
			ix.rayViews[key(v.Namespace, v.Cluster)] = v
		}
	}
	return ix.rayViews[key(c.rc.Namespace, c.rc.Name)]
}

// rayViewRules compare Ray's view with the pods: reachability first (nothing else is said about a
// dashboard that did not answer), then the GCS, the versions, the node table and Serve.
func rayViewRules(ix *index, c *clusterView) []Finding {
	v := ix.rayView(c)
	if v == nil {
		return nil
	}
	if v.Unreachable != nil && rayapi.AuthReason(v.Unreachable.Reason) {
		return []Finding{rayAuth(c, v)}
	}
	if v.Unreachable != nil {
		return []Finding{rayUnreachable(c, v)}
	}
	ev := map[string]string{"head": v.Head, "dashboardPort": fmt.Sprint(v.Port)}
	if !v.GCSAlive {
		ev["gcs"] = v.GCSMessage
		msg := fmt.Sprintf("%s: Ray's GCS is not alive: the dashboard on head %s answers its health check with 503%s; "+
			"no task, actor or Serve request can be scheduled while the head pod may look Running and Ready", c.what(), v.Head, quoted(v.GCSMessage))
		remedy := "read the GCS log on the head: kubectl exec -n " + c.rc.Namespace + " " + v.Head + " -- tail -n 50 /tmp/ray/session_latest/logs/gcs_server.out; " +
			"restarting the head (kubectl delete pod) starts a new GCS (losing its state unless GCS fault tolerance is on)"
		return append([]Finding{c.finding(RuleRayGCSUnhealthy, state.ClusterRef(c.rc), msg, remedy, ev)}, rayVersionMismatch(c, v)...)
	}
	var out []Finding
	out = append(out, rayVersionMismatch(c, v)...)
	if v.NodesRead {
		out = append(out, rayNodes(ix, c, v)...)
	}
	if v.AppsRead {
		out = append(out, serveApps(ix, c, v)...)
	}
	if v.JobsRead {
		out = append(out, rayJobsFailed(ix, c, v)...)
	}
	if v.AutoscalerRead {
		out = append(out, rayDemandInfeasible(c, v)...)
	}
	return out
}

// groupOffer is the Ray resources one group's pods offer.
type groupOffer struct {
	name      string
	resources map[string]float64
}

// groupOffers are what the head and each worker group that may have pods offer, as KubeRay's
// autoscaler config reads them (ray-operator's autoscaler: rayStartParams num-cpus, num-gpus and
// resources first, else the Ray container's limits, else its requests).
func groupOffers(c *clusterView) []groupOffer {
	head := c.rc.Spec.HeadGroupSpec
	out := []groupOffer{{"head", rayResources(head.RayStartParams, head.Template.Spec.Containers)}}
	for _, g := range c.rc.Spec.WorkerGroupSpecs {
		most := int32(0)
		if g.Replicas != nil {
			most = *g.Replicas
		}
		if g.MaxReplicas != nil && *g.MaxReplicas > most {
			most = *g.MaxReplicas
		}
		if most > 0 && (g.Suspend == nil || !*g.Suspend) {
			out = append(out, groupOffer{g.GroupName, rayResources(g.RayStartParams, g.Template.Spec.Containers)})
		}
	}
	return out
}

func rayResources(params map[string]string, containers []corev1.Container) map[string]float64 {
	out := map[string]float64{}
	quantity := func(name corev1.ResourceName) (float64, bool) {
		if len(containers) == 0 {
			return 0, false
		}
		r := containers[0].Resources
		if q, ok := r.Limits[name]; ok {
			return q.AsApproximateFloat64(), true
		}
		if q, ok := r.Requests[name]; ok {
			return q.AsApproximateFloat64(), true
		}
		return 0, false
	}
	if v, err := strconv.ParseFloat(strings.Trim(params["num-cpus"], `'"`), 64); err == nil {
		out["CPU"] = v
	} else if q, ok := quantity(corev1.ResourceCPU); ok {
		out["CPU"] = math.Floor(q)
	}
	if v, err := strconv.ParseFloat(strings.Trim(params["num-gpus"], `'"`), 64); err == nil {
		out["GPU"] = v
	} else if q, ok := quantity("nvidia.com/gpu"); ok {
		out["GPU"] = q
	}
	if raw := params["resources"]; raw != "" {
		// KubeRay's samples quote it twice: '"{\"Custom1\": 1}"'.
		js := strings.ReplaceAll(strings.Trim(raw, `'"`), `\"`, `"`)
		var custom map[string]float64
		if json.Unmarshal([]byte(js), &custom) == nil {
			for k, n := range custom {
				out[k] = n
			}
		}
	}
	return out
}

// judged says whether a demand's resource is one groupOffers can judge: not memory (Ray sizes it
// from the container at start), not a node affinity (node:<ip>) and not a placement group's
// bundle resource (CPU_group_<id>).
func judged(resource string) bool {
	return resource != "memory" && resource != "object_store_memory" && !strings.HasPrefix(resource, "node:") && !strings.Contains(resource, "_group_")
}

// rayDemandInfeasible reports the autoscaler's waiting demands that fit no group.
func rayDemandInfeasible(c *clusterView, v *rayapi.View) []Finding {
	offers := groupOffers(c)
	var never []string
	waiting := 0
	for _, d := range v.Demands {
		fits := false
		for _, g := range offers {
			ok := true
			for k, need := range d.Resources {
				have, declared := g.resources[k]
				if k == "CPU" && !declared {
					continue // Ray counts the container's CPUs itself: unknown here, so it may fit
				}
				if judged(k) && have < need {
					ok = false
				}
			}
			if ok {
				fits = true
				break
			}
		}
		if !fits {
			never = append(never, fmt.Sprintf("%d × %s", d.Count, resourceText(d.Resources)))
			waiting += d.Count
		}
	}
	if len(never) == 0 {
		return nil
	}
	var offered []string
	for _, g := range offers {
		offered = append(offered, g.name+" "+resourceText(g.resources))
	}
	pending := "none"
	if len(v.PendingLaunches) > 0 {
		var ps []string
		for t, n := range v.PendingLaunches {
			ps = append(ps, fmt.Sprintf("%d %s", n, t))
		}
		sort.Strings(ps)
		pending = strings.Join(ps, ", ")
	}
	msg := fmt.Sprintf("%s: Ray's autoscaler has %d request(s) waiting that no group can ever provide: %s; the groups offer %s; pending launches: %s",
		c.what(), waiting, strings.Join(never, ", "), strings.Join(offered, ", "), pending)
	remedy := "add a worker group whose rayStartParams (num-cpus, num-gpus, resources) or container limits offer what is asked, or lower the tasks' and actors' resource requests (their @ray.remote options)"
	return []Finding{c.finding(RuleRayDemandInfeasible, state.ClusterRef(c.rc), msg, remedy,
		map[string]string{"demands": strings.Join(never, "; "), "groups": strings.Join(offered, "; "), "pendingLaunches": pending, "head": v.Head})}
}

// resourceText is {CPU: 8, GPU: 1}, keys sorted.
func resourceText(r map[string]float64) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + strconv.FormatFloat(r[k], 'f', -1, 64)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// rayJobsFailed reports the RayJobs on c whose Ray job Ray's table says FAILED or STOPPED. Ray
// jobs submitted by hand (no RayJob) are the user's business and stay silent.
func rayJobsFailed(ix *index, c *clusterView, v *rayapi.View) []Finding {
	byID := map[string]rayapi.Job{}
	for _, j := range v.Jobs {
		if j.SubmissionID != "" {
			byID[j.SubmissionID] = j
		}
		if j.JobID != "" {
			byID[j.JobID] = j
		}
	}
	var out []Finding
	for i := range ix.s.Jobs {
		rj := &ix.s.Jobs[i]
		id := rj.Status.JobId
		if rj.Namespace != c.rc.Namespace || rj.Status.RayClusterName != c.rc.Name || id == "" {
			continue
		}
		j, ok := byID[id]
		if !ok || (j.Status != "FAILED" && j.Status != "STOPPED") {
			continue
		}
		what := j.Status
		if j.ErrorType != "" {
			what += " (" + j.ErrorType + ")"
		}
		ended := ""
		if !j.End.IsZero() {
			ended = " " + age(ix.s.Now.Sub(j.End)) + " ago"
		}
		says := "the RayJob says " + string(rj.Status.JobDeploymentStatus)
		if rj.Status.JobDeploymentStatus == "Running" {
			says = "the RayJob still says Running: the operator has not caught up"
		}
		ev := map[string]string{"rayJob": rj.Name, "jobId": id, "status": j.Status, "errorType": j.ErrorType, "head": v.Head}
		msg := fmt.Sprintf("%s: Ray reports the Ray job %s of RayJob %s %s%s%s; %s", c.what(), id, rj.Name, what, ended, quoted(j.Message), says)
		remedy := "read the job's log: kubectl port-forward -n " + c.rc.Namespace + " pod/" + v.Head + fmt.Sprintf(" %d", v.Port) +
			", then ray job logs " + id + " (or the dashboard's Jobs page); fix the entrypoint or its runtime environment and submit the RayJob again"
		out = append(out, c.finding(RuleRayJobFailedInRay, state.Ref{Kind: "RayJob", Namespace: rj.Namespace, Name: rj.Name, UID: string(rj.UID)}, msg, remedy, ev))
	}
	return out
}

func rayUnreachable(c *clusterView, v *rayapi.View) Finding {
	u := v.Unreachable
	ev := map[string]string{"reason": string(u.Reason)}
	if v.Head != "" {
		ev["head"], ev["dashboardPort"] = v.Head, fmt.Sprint(v.Port)
	}
	where := "its dashboard"
	if v.Head != "" {
		where = fmt.Sprintf("the dashboard of head %s (port %d)", v.Head, v.Port)
	}
	msg := fmt.Sprintf("%s: doctor could not read Ray's own view from %s: %s; nothing is known of Ray's health", c.what(), where, strings.TrimSuffix(u.Detail, "."))
	remedy := map[rayapi.Reason]string{
		rayapi.NoHead:    "the head rules above say why no head runs; once one does, run doctor again",
		rayapi.Forbidden: "ask for RBAC verb \"create\" on \"pods/portforward\" in namespace " + c.rc.Namespace + " (docs/rbac.md), or pass " + flagname.Flag(flagname.Ray) + "=false",
		rayapi.Timeout:   "check the head's dashboard (kubectl port-forward -n " + c.rc.Namespace + " pod/" + v.Head + " 8265, then curl localhost:8265/api/gcs_healthz), or raise " + flagname.Flag(flagname.RayTimeout),
		rayapi.Deadline:  "raise " + flagname.Flag(flagname.RayDeadline) + ", or name the cluster (doctor " + c.rc.Name + ") to read only its dashboard",
		rayapi.HTTPError: fmt.Sprintf("port %d of the head answers, but not as Ray's dashboard does: check that the head's container port named dashboard is Ray's (ray start --dashboard-port)", v.Port),
	}[u.Reason]
	if remedy == "" {
		remedy = fmt.Sprintf("check that the head's dashboard listens on port %d (ray start --dashboard-host=0.0.0.0; the head's container port named dashboard)", v.Port)
	}
	return c.finding(RuleRayDashboardUnreachable, state.ClusterRef(c.rc), msg, remedy, ev)
}

// rayAuth is RuleRayDashboardAuth: why doctor could not present the token the head's Ray asks
// for, with the fix for that reason.
func rayAuth(c *clusterView, v *rayapi.View) Finding {
	u := v.Unreachable
	ev := map[string]string{"reason": string(u.Reason), "head": v.Head, "dashboardPort": fmt.Sprint(v.Port)}
	if v.Auth != "" {
		ev["auth"] = v.Auth
	}
	if v.TokenFrom != "" {
		// Not "tokenFrom": the bundle's redactor blanks values under secret-sounding keys, and
		// this one names the Secret and key, never the token.
		ev["readFrom"] = v.TokenFrom
	}
	msg := fmt.Sprintf("%s: doctor could not read Ray's own view from the dashboard of head %s (port %d): %s; nothing is known of Ray's health",
		c.what(), v.Head, v.Port, strings.TrimSuffix(u.Detail, "."))
	var remedy string
	switch {
	case u.Reason == rayapi.TokenForbidden:
		remedy = "ask for RBAC verb \"get\" on \"secrets\" limited to the token's Secret by name (docs/rbac.md has the role), or pass " + flagname.Flag(flagname.Ray) + "=false"
	case u.Reason == rayapi.Refused && v.TokenFrom == "":
		remedy = "the head's Ray asks for a token its pod does not show: set it as KubeRay does (spec.authOptions.mode token; RAY_AUTH_TOKEN from a Secret key) so that doctor can read it"
	case u.Reason == rayapi.Refused:
		remedy = "Ray holds another token than " + v.TokenFrom + ": Ray reads RAY_AUTH_TOKEN when the head starts, so a Secret changed since needs the head restarted (kubectl delete pod -n " + c.rc.Namespace + " " + v.Head + ")"
	case v.Auth == "k8s":
		remedy = "read Ray's view inside the head instead: kubectl exec -n " + c.rc.Namespace + " " + v.Head + " -- ray status; or pass " + flagname.Flag(flagname.Ray) + "=false"
	default:
		remedy = "give the Ray container its token as KubeRay does (RAY_AUTH_TOKEN from key auth_token of the Secret spec.authOptions.secretName names, or of the one the operator makes), or pass " + flagname.Flag(flagname.Ray) + "=false"
	}
	return c.finding(RuleRayDashboardAuth, state.ClusterRef(c.rc), msg, remedy, ev)
}

// rayVersionRE is a Ray version at the start of an image tag: rayproject/ray:2.9.0-py310-gpu.
var rayVersionRE = regexp.MustCompile(`^(\d+\.\d+\.\d+)`)

// imageRayVersion is the Ray version an image's tag names, or "".
func imageRayVersion(image string) string {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return rayVersionRE.FindString(image[i+1:])
}

// rayVersionMismatch compares the head's Ray version with spec.rayVersion and with the version
// in each running worker's image tag (the images carry it; a digest or a custom tag says
// nothing, and is left alone).
func rayVersionMismatch(c *clusterView, v *rayapi.View) []Finding {
	if v.Version == "" {
		return nil
	}
	var why []string
	ev := map[string]string{"head": v.Head, "rayVersion": v.Version}
	if want := c.rc.Spec.RayVersion; want != "" && want != v.Version {
		why = append(why, fmt.Sprintf("spec.rayVersion is %s", want))
		ev["specRayVersion"] = want
	}
	var odd []string
	for _, w := range c.workers {
		if w.Status.Phase != corev1.PodRunning || w.DeletionTimestamp != nil {
			continue
		}
		for _, cs := range w.Status.ContainerStatuses {
			if len(w.Spec.Containers) > 0 && cs.Name == w.Spec.Containers[0].Name {
				if wv := imageRayVersion(cs.Image); wv != "" && wv != v.Version {
					odd = append(odd, w.Name+" ("+cs.Image+")")
				}
			}
		}
	}
	if len(odd) > 0 {
		sort.Strings(odd)
		why = append(why, fmt.Sprintf("worker(s) run images of another version: %s", strings.Join(odd, ", ")))
		ev["workers"] = strings.Join(odd, ",")
	}
	if len(why) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s: the head runs Ray %s, but %s; Ray refuses to join nodes of another version, and KubeRay's features follow spec.rayVersion",
		c.what(), v.Version, strings.Join(why, "; "))
	remedy := "run one Ray version everywhere: set spec.rayVersion and every group's image (head and workers) to the same Ray release"
	return []Finding{c.finding(RuleRayVersionMismatch, state.ClusterRef(c.rc), msg, remedy, ev)}
}

// rayNodes compares Ray's node table with the cluster's Running pods, by pod IP: a pod whose
// only nodes are DEAD (a raylet that restarted registers anew at the same IP, so a DEAD entry
// beside an ALIVE one is history), and a Ready pod Ray has never seen.
func rayNodes(ix *index, c *clusterView, v *rayapi.View) []Finding {
	alive, dead := map[string]bool{}, map[string]rayapi.Node{}
	for _, n := range v.Nodes {
		if n.Alive() {
			alive[n.IP] = true
		} else if _, seen := dead[n.IP]; !seen {
			dead[n.IP] = n
		}
	}
	var deadPods, unknown []*corev1.Pod
	for _, p := range append(append([]*corev1.Pod(nil), c.heads...), c.workers...) {
		ip := p.Status.PodIP
		if ip == "" || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || alive[ip] {
			continue
		}
		if _, isDead := dead[ip]; isDead {
			deadPods = append(deadPods, p)
			continue
		}
		if rc := podCondition(p, corev1.PodReady); ray.RunningReady(p) && rc != nil && ix.s.Now.Sub(rc.LastTransitionTime.Time) > ix.opts.RayRegisterGrace {
			unknown = append(unknown, p)
		}
	}
	var out []Finding
	if len(deadPods) > 0 {
		var names, lines []string
		refs := make([]state.Ref, 0, len(deadPods))
		for _, p := range deadPods {
			n := dead[p.Status.PodIP]
			names = append(names, p.Name)
			refs = append(refs, state.PodRef(p))
			line := p.Name + " (node " + shortID(n.ID) + " at " + n.IP
			if n.Detail != "" {
				line += ": " + firstLine(n.Detail)
			}
			lines = append(lines, line+")")
		}
		msg := fmt.Sprintf("%s: Ray has marked the node(s) of %d Running pod(s) DEAD: %s; Ray schedules nothing on them while Kubernetes counts them as capacity",
			c.what(), len(deadPods), strings.Join(lines, "; "))
		remedy := "delete the pods (kubectl delete pod -n " + c.rc.Namespace + " " + strings.Join(names, " ") + "): KubeRay creates new ones that join the head; " +
			"if this follows a head restart, enable GCS fault tolerance so workers survive it (kuberay #1141)"
		f := c.finding(RuleRayNodeDead, state.ClusterRef(c.rc), msg, remedy, map[string]string{"pods": strings.Join(names, ","), "head": v.Head})
		out = append(out, f)
	}
	if len(unknown) > 0 {
		var names []string
		for _, p := range unknown {
			names = append(names, p.Name+" ("+p.Status.PodIP+")")
		}
		msg := fmt.Sprintf("%s: %d pod(s) Running and Ready for over %s are not in Ray's node table (%d node(s) known to head %s): %s; their raylets never joined this head",
			c.what(), len(unknown), age(ix.opts.RayRegisterGrace), len(v.Nodes), v.Head, strings.Join(names, ", "))
		remedy := "read a pod's raylet log (kubectl logs -n " + c.rc.Namespace + " " + unknown[0].Name + "): a wrong head address, a Ray version other than the head's, " +
			"or a NetworkPolicy between the pods and the head's GCS port (6379) keeps it out"
		out = append(out, c.finding(RuleRayPodUnregistered, state.ClusterRef(c.rc), msg, remedy, map[string]string{"pods": strings.Join(names, ","), "head": v.Head, "rayNodes": fmt.Sprint(len(v.Nodes))}))
	}
	return out
}

// serveApps reports Serve applications that failed or have been deploying too long, with Ray's
// message and that of each deployment that is not HEALTHY.
func serveApps(ix *index, c *clusterView, v *rayapi.View) []Finding {
	var out []Finding
	for _, a := range v.Apps {
		var rule string
		switch {
		case a.Status == "DEPLOY_FAILED" || a.Status == "UNHEALTHY":
			rule = RuleServeAppFailed
		case a.Status == "DEPLOYING" && !a.LastDeployed.IsZero() && ix.s.Now.Sub(a.LastDeployed) > ix.opts.ServeDeployingTooLong:
			rule = RuleServeAppDeploying
		default:
			continue
		}
		var deps []string
		for _, d := range a.Deployments {
			if d.Status != "HEALTHY" {
				deps = append(deps, d.Name+" "+d.Status+quoted(d.Message))
			}
		}
		ev := map[string]string{"app": a.Name, "status": a.Status, "head": v.Head}
		msg := fmt.Sprintf("%s: Serve application %s is %s", c.what(), a.Name, a.Status)
		if rule == RuleServeAppDeploying {
			msg += " for " + age(ix.s.Now.Sub(a.LastDeployed)) + " since it was last deployed"
		}
		msg += quoted(a.Message)
		if len(deps) > 0 {
			msg += "; deployments: " + strings.Join(deps, "; ")
			ev["deployments"] = strings.Join(deps, "; ")
		}
		remedy := "fix the application (its import path, its runtime_env, its replicas' resources) in " + serveConfigField(c) +
			"; Ray's full message: kubectl port-forward -n " + c.rc.Namespace + " pod/" + v.Head + fmt.Sprintf(" %d", v.Port) + ", then serve status (or GET /api/serve/applications/)"
		out = append(out, c.finding(rule, state.ClusterRef(c.rc), msg, remedy, ev))
	}
	return out
}

// serveConfigField is where the cluster's Serve config lives.
func serveConfigField(c *clusterView) string {
	if c.service != nil {
		return "RayService " + c.service.Name + "'s spec.serveConfigV2"
	}
	return "the Serve config deployed to this cluster"
}

// shortID is a Ray node ID's first 8 characters, as `ray status` shows them.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
