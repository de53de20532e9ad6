package diagnose

import (
	"sort"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// index is the snapshot arranged for the rules: built once in O(objects), so no rule scans the
// whole snapshot per cluster (doctor must stay linear over thousands of clusters).
type index struct {
	s         *state.Snapshot
	opts      Options
	nodes     map[string]*corev1.Node
	services  map[string]*corev1.Service // by namespace/name
	operators []ray.Operator
	clusters  []*clusterView
	// headEvents: the kept Events (KeepEvent) per "namespace/cluster", built on first use.
	headEvents map[string][]*corev1.Event
	// serveEndpoints sums the serve Services' EndpointSlices, by namespace/service name.
	serveEndpoints map[string]*serveEndpoints
	// cleanupJobs are the Redis cleanup Jobs by namespace/cluster.
	cleanupJobs map[string]*batchv1.Job
	// rayViews is Ray's view (Snapshot.Ray) by namespace/cluster, built on first use.
	rayViews map[string]*rayapi.View
	// gcsStores are the live heads' RocksDB GCS stores (indexGCSStores), built on first use.
	gcsStores map[string][]gcsStoreHolder
}

// clusterView is one RayCluster with its pods and the RayService or RayJob that owns it.
type clusterView struct {
	rc      *rayv1.RayCluster
	owner   *state.Ref
	service *rayv1.RayService // set when a RayService owns the cluster
	// cronJob is the RayCronJob whose RayJob owns the cluster (KubeRay v1.7.0), "" for none.
	cronJob string
	heads   []*corev1.Pod
	workers []*corev1.Pod
}

func key(ns, name string) string { return ns + "/" + name }

func newIndex(s *state.Snapshot, opts Options) *index {
	ix := &index{
		s:        s,
		opts:     opts,
		nodes:    make(map[string]*corev1.Node, len(s.Nodes)),
		services: make(map[string]*corev1.Service, len(s.Serve)),
	}
	for i := range s.Nodes {
		ix.nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	for i := range s.Serve {
		ix.services[key(s.Serve[i].Namespace, s.Serve[i].Name)] = &s.Serve[i]
	}
	ix.operators = ray.FindOperators(s.Deployments)
	ix.serveEndpoints = indexServeEndpoints(s.ServeEndpoints)
	ix.cleanupJobs = indexCleanupJobs(s.CleanupJobs)

	var byKey map[string]*clusterView
	ix.clusters, byKey = ownedClusters(s)
	for i := range s.Pods {
		p := &s.Pods[i]
		if !isRayPod(p) {
			continue
		}
		cv := byKey[key(p.Namespace, p.Labels[ray.LabelCluster])]
		if cv == nil {
			continue
		}
		switch {
		case ray.IsHead(p):
			cv.heads = append(cv.heads, p)
		case ray.IsWorker(p):
			cv.workers = append(cv.workers, p)
		}
	}
	for _, cv := range ix.clusters {
		sortPods(cv.heads)
		sortPods(cv.workers)
	}
	sort.Slice(ix.clusters, func(i, j int) bool {
		a, b := ix.clusters[i].rc, ix.clusters[j].rc
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return ix
}

func sortPods(ps []*corev1.Pod) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
}

// ownedClusters is a view of each RayCluster of s, in snapshot order, with the RayService or
// RayJob that made it and no pods yet, and the views by namespace/name. It reads the Ray objects
// only, so choosing a target's clusters (Checked) does not arrange the whole snapshot.
func ownedClusters(s *state.Snapshot) ([]*clusterView, map[string]*clusterView) {
	views := make([]*clusterView, 0, len(s.Clusters))
	byKey := make(map[string]*clusterView, len(s.Clusters))
	for i := range s.Clusters {
		rc := &s.Clusters[i]
		cv := &clusterView{rc: rc}
		byKey[key(rc.Namespace, rc.Name)] = cv
		views = append(views, cv)
	}
	attachOwners(s, byKey)
	return views, byKey
}

// attachOwners links clusters to the RayService or RayJob that made them: by the controller
// owner reference KubeRay sets, and by the names the owners' status records (an owner reference
// can be missing on clusters adopted or restored from backups).
func attachOwners(s *state.Snapshot, byKey map[string]*clusterView) {
	svcByKey := make(map[string]*rayv1.RayService, len(s.Services))
	for i := range s.Services {
		rs := &s.Services[i]
		svcByKey[key(rs.Namespace, rs.Name)] = rs
		for _, name := range []string{rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName} {
			if cv := byKey[key(rs.Namespace, name)]; name != "" && cv != nil && cv.owner == nil {
				cv.owner = &state.Ref{Kind: "RayService", Namespace: rs.Namespace, Name: rs.Name, UID: string(rs.UID)}
				cv.service = rs
			}
		}
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if cv := byKey[key(j.Namespace, j.Status.RayClusterName)]; j.Status.RayClusterName != "" && cv != nil && cv.owner == nil {
			cv.owner = &state.Ref{Kind: "RayJob", Namespace: j.Namespace, Name: j.Name, UID: string(j.UID)}
		}
	}
	for _, cv := range byKey {
		if cv.owner != nil {
			continue
		}
		for _, or := range cv.rc.OwnerReferences {
			if or.Controller == nil || !*or.Controller || (or.Kind != "RayService" && or.Kind != "RayJob") {
				continue
			}
			cv.owner = &state.Ref{Kind: or.Kind, Namespace: cv.rc.Namespace, Name: or.Name, UID: string(or.UID)}
			if or.Kind == "RayService" {
				cv.service = svcByKey[key(cv.rc.Namespace, or.Name)]
			}
		}
	}
	// A RayCronJob's clusters: those of the RayJobs it made (a target may name it).
	cron := map[string]string{}
	for i := range s.Jobs {
		if run, ok := ray.CronRunOf(&s.Jobs[i]); ok {
			cron[key(s.Jobs[i].Namespace, s.Jobs[i].Name)] = run.CronJob
		}
	}
	if len(cron) == 0 {
		return
	}
	for _, cv := range byKey {
		if cv.owner != nil && cv.owner.Kind == "RayJob" {
			cv.cronJob = cron[key(cv.owner.Namespace, cv.owner.Name)]
		}
	}
}

// finding is a finding of rule about c, with the rule's severity from Catalog.
func (c *clusterView) finding(rule string, obj state.Ref, msg, remedy string, ev map[string]string) Finding {
	return Finding{Rule: rule, Severity: severityOf(rule), Cluster: state.ClusterRef(c.rc), Object: obj, Message: msg, Remedy: remedy, Evidence: ev}
}

// what names the cluster for messages, with its owner: "RayCluster ml/a (RayService ml/svc)".
func (c *clusterView) what() string {
	s := "RayCluster " + key(c.rc.Namespace, c.rc.Name)
	if c.owner != nil {
		s += " (" + c.owner.Kind + " " + c.owner.Name + ")"
	}
	return s
}

// liveHeads are the head pods not being deleted.
func (c *clusterView) liveHeads() []*corev1.Pod {
	var out []*corev1.Pod
	for _, h := range c.heads {
		if h.DeletionTimestamp == nil {
			out = append(out, h)
		}
	}
	return out
}

func (c *clusterView) suspended() bool { return ray.Suspended(c.rc) }
