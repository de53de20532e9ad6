// Package diagnose holds doctor's rules: pure functions from a state.Snapshot of cluster state to
// Findings. Nothing here talks to the API server, so every rule is tested from fixtures.
package diagnose

import (
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Health of one RayCluster: the worst severity among its findings (info does not count).
type Health string

const (
	HealthHealthy Health = "healthy"
	HealthWarning Health = "warning"
	HealthError   Health = "error"
)

// ClusterReport is one RayCluster checked.
type ClusterReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Health    Health `json:"health"`
	// Owner is the RayService or RayJob that made the cluster, if any.
	Owner *state.Ref `json:"owner,omitempty"`
	// Heads are the names of its head pods (normally one), Nodes the nodes they run on.
	Heads   []string  `json:"heads,omitempty"`
	Nodes   []string  `json:"nodes,omitempty"`
	Created time.Time `json:"created"`
	// Groups are its worker groups, in spec order: desired pods against those that exist, run and
	// are Ready.
	Groups []GroupReport `json:"groups,omitempty"`
	// Ray is what the head's dashboard said (doctor --ray), when it was asked.
	Ray *RayReport `json:"ray,omitempty"`
}

// RayReport is Ray's own view of a cluster in a report: whether the dashboard was read, and
// what it counted.
type RayReport struct {
	// Read: the dashboard answered; Unreachable says why not otherwise.
	Read        bool   `json:"read"`
	Unreachable string `json:"unreachable,omitempty"`
	Head        string `json:"head,omitempty"`
	GCSAlive    bool   `json:"gcsAlive"`
	RayVersion  string `json:"rayVersion,omitempty"`
	// AliveNodes and DeadNodes count Ray's node table; Apps the Serve applications by status.
	AliveNodes int            `json:"aliveNodes"`
	DeadNodes  int            `json:"deadNodes"`
	Apps       map[string]int `json:"apps,omitempty"`
	// Waiting is how many resource requests the autoscaler has waiting (omitted without one).
	Waiting int `json:"waiting,omitempty"`
	// NotRead lists the reads that failed while the others answered.
	NotRead []string `json:"notRead,omitempty"`
}

// GroupReport is one worker group of a RayCluster.
type GroupReport struct {
	Name string `json:"name"`
	// Desired is replicas × numOfHosts (0 while the group is suspended).
	Desired int `json:"desired"`
	// Pods are the group's pods not being deleted, whatever their phase; Running and Ready count
	// among them.
	Pods    int `json:"pods"`
	Running int `json:"running"`
	Ready   int `json:"ready"`
}

// Report is what Diagnose concluded. Clusters are sorted by namespace and name; findings by
// cluster (cluster-independent ones first), then severity (worst first), rule and object.
type Report struct {
	Now       time.Time       `json:"-"`
	Clusters  []ClusterReport `json:"clusters"`
	Findings  []Finding       `json:"findings"`
	Operators []ray.Operator  `json:"operators"`
	// RayJobs are the RayJobs checked (rules of scope "rayjob"), sorted by namespace and name.
	RayJobs []JobReport `json:"rayJobs,omitempty"`
	// RayServices are the RayServices checked by the rules about a RayService itself (scope
	// "rayservice-object"), sorted by namespace and name.
	RayServices []ServiceReport `json:"rayServices,omitempty"`
	Blind       []state.Gap     `json:"blind,omitempty"`
}

// Target narrows a diagnosis to one object and the clusters it owns. Kind is ray.KindRayCluster,
// ray.KindRayService, ray.KindRayJob, or "" for whichever of them has Name.
type Target = ray.Target

type clusterRule func(*index, *clusterView) []Finding

// clusterRules run on every RayCluster, in this order.
var clusterRules = []clusterRule{specRules, headPodRules, headCountRules, statusStale, nodePressure, workersNotReady, serveRules,
	headRestartDisabled, workerInitFailing, headRecreateLoop, workersStale,
	upgradeStuck, serveNoEndpoints, gcsFTFinalizerStuck, workerFailed, workerImagePull, workerPending, workerCrashLoop, workersMissing, workersOutsideSpec, containerNeverRestarted, budgetNeverAllows, networkPolicyBlocksDNS, gcsStoreShared, gcsStoreUpgradeBlocked, specInvalid, rayViewRules,
	admissionRules}

// fileRules are the cluster rules doctor -f runs (Options.SpecOnly): those of the spec, the
// admission rules, and those that judge what a document declares beside it (its budgets, network
// policies and GCS store). RunsOnFiles names the rules of the last kind.
var fileRules = []clusterRule{specRules, budgetNeverAllows, networkPolicyBlocksDNS, gcsStoreUpgradeBlocked, admissionRules}

// RunsOnFiles says whether doctor -f runs rule although its scope is not "spec", "manifest" or
// "admission": it judges what documents declare beside the cluster spec.
func RunsOnFiles(rule string) bool {
	switch rule {
	case RuleBudgetNeverAllows, RuleNetworkPolicyBlocksDNS, RuleGCSStoreUpgradeBlocked:
		return true
	}
	return false
}

// Diagnose runs every rule over s. It only reads s; the same snapshot always gives the same report.
func Diagnose(s *state.Snapshot, opts Options) Report {
	return DiagnoseTarget(s, opts, nil)
}

// DiagnoseTarget is Diagnose limited to the clusters of t (all when t is nil). Operator findings
// are always included: they explain why heads are not repaired.
func DiagnoseTarget(s *state.Snapshot, opts Options, t *Target) Report {
	ix := newIndex(s, opts.withDefaults())
	// Blind is copied: redaction must not write into the caller's snapshot.
	r := Report{Now: s.Now, Operators: ix.operators, Blind: append([]state.Gap(nil), s.Blind...), Clusters: []ClusterReport{}}
	rules := clusterRules
	if opts.SpecOnly {
		// What a spec alone tells: no operator, no pods, no RayJob or RayService status; and,
		// against a cluster, whether its head would be admitted and placed.
		rules = fileRules
	} else {
		r.Findings = operatorRules(ix)
	}
	byCluster := map[*clusterView][]Finding{}
	for _, c := range ix.clusters {
		if t != nil && !c.matches(*t) {
			continue
		}
		var fs []Finding
		for _, rule := range rules {
			fs = append(fs, rule(ix, c)...)
		}
		fs = withoutRisks(fs, opts)
		byCluster[c] = fs
		r.Findings = append(r.Findings, fs...)
		cr := c.report(fs)
		cr.Ray = ix.rayReport(c)
		r.Clusters = append(r.Clusters, cr)
	}
	for _, j := range ix.jobViews() {
		if opts.SpecOnly || !j.checked(s, t) {
			continue
		}
		if j.cluster != nil {
			// What holds the cluster: an info finding (a risk, such as head-evictable-first)
			// holds nothing, and counts for no health.
			for _, f := range byCluster[j.cluster] {
				if f.Severity != SeverityInfo {
					j.findings = append(j.findings, f)
				}
			}
		}
		var fs []Finding
		for _, rule := range jobRules {
			fs = append(fs, rule(ix, j)...)
		}
		r.Findings = append(r.Findings, fs...)
		r.RayJobs = append(r.RayJobs, j.report(fs))
	}
	for _, v := range ix.serviceViews() {
		if opts.SpecOnly || !v.checked(s, t) {
			continue
		}
		var fs []Finding
		for _, rule := range serviceRules {
			fs = append(fs, rule(ix, v)...)
		}
		r.Findings = append(r.Findings, fs...)
		r.RayServices = append(r.RayServices, v.report(fs))
	}
	if !opts.SpecOnly && !s.ClustersSelected && (t == nil || strings.EqualFold(string(t.Kind), ray.KindRayCronJob)) {
		// RayCronJobs are checked when doctor checks everything, or one of them: a target of
		// another kind names no RayCronJob, and -l selects RayClusters.
		r.Findings = append(r.Findings, cronJobFindings(ix, t)...)
	}
	if r.Operators == nil {
		r.Operators = []ray.Operator{}
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	sortFindings(r.Findings)
	state.
		// Every string of the report, whatever field it is in, goes through the redactor.
		Redactor(s).Strings(&r)
	return r
}

// checked says whether doctor checks j: every RayJob, or the one t names, or those of the
// RayCluster t names. With -l, only RayJobs whose cluster the selector listed (RayJobs are not
// listed by it).
func (j *jobView) checked(s *state.Snapshot, t *Target) bool {
	if s.ClustersSelected && j.cluster == nil {
		return false
	}
	if t == nil {
		return true
	}
	kind := strings.ToLower(string(t.Kind))
	if (kind == "" || kind == "rayjob") && j.job.Name == t.Name {
		return true
	}
	if run, ok := ray.CronRunOf(j.job); ok && kind == "raycronjob" && run.CronJob == t.Name {
		return true
	}
	return j.cluster != nil && j.cluster.matches(*t)
}

func (c *clusterView) matches(t Target) bool {
	kind := strings.ToLower(string(t.Kind))
	if (kind == "" || kind == "raycluster") && c.rc.Name == t.Name {
		return true
	}
	if kind == "raycronjob" {
		return c.cronJob == t.Name
	}
	return c.owner != nil && c.owner.Name == t.Name && (kind == "" || kind == strings.ToLower(c.owner.Kind))
}

// Checked tells which RayClusters DiagnoseTarget(s, _, t) checks: every one when t is nil; for a
// target, the cluster it names or the clusters its RayService or RayJob owns.
func Checked(s *state.Snapshot, t *Target) func(rc *rayv1.RayCluster) bool {
	if t == nil {
		return func(*rayv1.RayCluster) bool { return true }
	}
	in := map[string]bool{}
	views, _ := ownedClusters(s)
	for _, c := range views {
		in[key(c.rc.Namespace, c.rc.Name)] = c.matches(*t)
	}
	return func(rc *rayv1.RayCluster) bool { return in[key(rc.Namespace, rc.Name)] }
}

// Unlisted is why s cannot say whether the object t names exists: the LIST of its kind was
// refused (a RayCronJob's: the RayCronJob LIST is optional); "" when it was read.
func Unlisted(s *state.Snapshot, t Target) string {
	if !strings.EqualFold(string(t.Kind), ray.KindRayCronJob) {
		return ""
	}
	for _, g := range s.Blind {
		if g.Resource == "raycronjobs" {
			return g.Reason
		}
	}
	return ""
}

// Has reports whether s holds the object t names.
func Has(s *state.Snapshot, t Target) bool {
	kind := strings.ToLower(string(t.Kind))
	if kind == "raycronjob" { // named only with its kind: a bare NAME is a RayCluster, RayService or RayJob
		for i := range s.CronJobs {
			if s.CronJobs[i].Name == t.Name {
				return true
			}
		}
		return false
	}
	if kind == "" || kind == "raycluster" {
		for i := range s.Clusters {
			if s.Clusters[i].Name == t.Name {
				return true
			}
		}
	}
	if kind == "" || kind == "rayservice" {
		for i := range s.Services {
			if s.Services[i].Name == t.Name {
				return true
			}
		}
	}
	if kind == "" || kind == "rayjob" {
		for i := range s.Jobs {
			if s.Jobs[i].Name == t.Name {
				return true
			}
		}
	}
	return false
}

func (c *clusterView) report(fs []Finding) ClusterReport {
	cr := ClusterReport{Namespace: c.rc.Namespace, Name: c.rc.Name, UID: string(c.rc.UID), Health: HealthOf(fs),
		Owner: c.owner, Created: c.rc.CreationTimestamp.UTC()}
	for _, h := range c.heads {
		cr.Heads = append(cr.Heads, h.Name)
		if h.Spec.NodeName != "" {
			cr.Nodes = append(cr.Nodes, h.Spec.NodeName)
		}
	}
	cr.Groups = c.groups()
	return cr
}

// rayReport is Ray's view of c for the report, nil when it was not asked.
func (ix *index) rayReport(c *clusterView) *RayReport {
	v := ix.rayView(c)
	if v == nil {
		return nil
	}
	r := &RayReport{Head: v.Head, GCSAlive: v.GCSAlive, RayVersion: v.Version, NotRead: v.Failed}
	if v.Unreachable != nil {
		r.Unreachable = string(v.Unreachable.Reason) + ": " + v.Unreachable.Detail
		return r
	}
	r.Read = true
	for _, n := range v.Nodes {
		if n.Alive() {
			r.AliveNodes++
		} else {
			r.DeadNodes++
		}
	}
	for _, d := range v.Demands {
		r.Waiting += d.Count
	}
	for _, a := range v.Apps {
		if r.Apps == nil {
			r.Apps = map[string]int{}
		}
		r.Apps[a.Status]++
	}
	return r
}

// groups counts each worker group's pods against its desired count: which group is short, and how.
func (c *clusterView) groups() []GroupReport {
	if len(c.rc.Spec.WorkerGroupSpecs) == 0 {
		return nil
	}
	at := map[string]int{}
	out := make([]GroupReport, len(c.rc.Spec.WorkerGroupSpecs))
	for i := range c.rc.Spec.WorkerGroupSpecs {
		g := &c.rc.Spec.WorkerGroupSpecs[i]
		out[i] = GroupReport{Name: g.GroupName, Desired: desiredPods(g)}
		at[g.GroupName] = i
	}
	for _, w := range c.workers {
		i, ok := at[w.Labels[ray.LabelGroup]]
		if !ok || w.DeletionTimestamp != nil {
			continue
		}
		out[i].Pods++
		if w.Status.Phase == corev1.PodRunning {
			out[i].Running++
		}
		if ray.RunningReady(w) {
			out[i].Ready++
		}
	}
	return out
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ga, gb := findingGroup(a), findingGroup(b); ga != gb {
			return ga < gb
		}
		if a.RayJob != nil && b.RayJob != nil && (a.RayJob.Namespace != b.RayJob.Namespace || a.RayJob.Name != b.RayJob.Name) {
			if a.RayJob.Namespace != b.RayJob.Namespace {
				return a.RayJob.Namespace < b.RayJob.Namespace
			}
			return a.RayJob.Name < b.RayJob.Name
		}
		if a.Cluster.Namespace != b.Cluster.Namespace {
			return a.Cluster.Namespace < b.Cluster.Namespace
		}
		if a.Cluster.Name != b.Cluster.Name {
			return a.Cluster.Name < b.Cluster.Name
		}
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Object.Namespace != b.Object.Namespace {
			return a.Object.Namespace < b.Object.Namespace
		}
		return a.Object.Name < b.Object.Name
	})
}

// findingGroup orders the report: the operator's findings, the clusters', then the RayJobs'.
func findingGroup(f Finding) int {
	switch {
	case f.RayJob != nil:
		return 2
	case f.Cluster.Name != "":
		return 1
	}
	return 0
}

// Summary counts clusters by health and findings by severity.
type Summary struct {
	Clusters     int `json:"clusters"`
	Healthy      int `json:"healthy"`
	WithErrors   int `json:"withErrors"`
	WithWarnings int `json:"withWarnings"`
	Errors       int `json:"errors"`
	Warnings     int `json:"warnings"`
	Infos        int `json:"infos"`
	// Accepted counts the findings an accept file accepted; they are in none of the counts above.
	Accepted int `json:"accepted,omitempty"`
}

// Summary of r. A cluster with errors and warnings counts as with errors.
func (r *Report) Summary() Summary {
	s := Summary{Clusters: len(r.Clusters)}
	for _, c := range r.Clusters {
		switch c.Health {
		case HealthHealthy:
			s.Healthy++
		case HealthError:
			s.WithErrors++
		case HealthWarning:
			s.WithWarnings++
		}
	}
	for _, f := range r.Findings {
		if f.Accepted != nil {
			s.Accepted++
			continue
		}
		switch f.Severity {
		case SeverityError:
			s.Errors++
		case SeverityWarning:
			s.Warnings++
		case SeverityInfo:
			s.Infos++
		}
	}
	return s
}

// Worst is the highest severity among the findings that are not accepted, "" when there are none.
func (r *Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		if f.Accepted == nil && f.Severity.Rank() > w.Rank() {
			w = f.Severity
		}
	}
	return w
}

// HealthOf is the worst severity among fs that are not accepted; info does not count.
func HealthOf(fs []Finding) Health {
	h := HealthHealthy
	for _, f := range fs {
		switch {
		case f.Accepted != nil:
		case f.Severity == SeverityError:
			h = HealthError
		case f.Severity == SeverityWarning && h == HealthHealthy:
			h = HealthWarning
		}
	}
	return h
}
