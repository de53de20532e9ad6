package diagnose

import (
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleGCSStoreShared is an invariant between the heads of a namespace: a RocksDB GCS store
// (KubeRay v1.7.0's gcsFaultToleranceOptions.backend: rocksdb) has one writer, so no two live
// heads may keep their GCS in the same directory of the same claim. RocksDB enforces it with its
// own LOCK file: the second head's GCS cannot open the store and its cluster never becomes ready;
// its head is not Ready or crash-loops, and no controller says why. KubeRay's reconcileGCSStoragePVC
// (raycluster_controller.go) warns that a storage.claimName shared by a RayService's
// generations deadlocks its zero-downtime (NewCluster) upgrade for this reason: the pending
// cluster never becomes ready, so the active one is never torn down.
const RuleGCSStoreShared = "gcs-store-shared"

// gcsStoreHolder is a live head keeping its GCS in a RocksDB store, with its cluster.
type gcsStoreHolder struct {
	cluster *clusterView
	head    *corev1.Pod
	store   ray.GCSStore
}

// indexGCSStores groups the live heads of RocksDB GCS stores by namespace, claim and directory,
// each group oldest head first: the first holds RocksDB's lock.
func indexGCSStores(clusters []*clusterView) map[string][]gcsStoreHolder {
	out := map[string][]gcsStoreHolder{}
	for _, c := range clusters {
		for _, h := range c.heads {
			if h.DeletionTimestamp != nil || ray.Terminal(h) {
				continue // leaving: it releases the store
			}
			if s, ok := ray.GCSStoreOf(h); ok {
				k := gcsStoreKey(h.Namespace, s)
				out[k] = append(out[k], gcsStoreHolder{cluster: c, head: h, store: s})
			}
		}
	}
	for _, hs := range out {
		sort.SliceStable(hs, func(i, j int) bool {
			a, b := hs[i].head, hs[j].head
			if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
				return a.CreationTimestamp.Before(&b.CreationTimestamp)
			}
			return a.Name < b.Name
		})
	}
	return out
}

func gcsStoreKey(ns string, s ray.GCSStore) string { return ns + "/" + s.Claim + "/" + s.Dir }

// gcsStoreShared reports each cluster whose head keeps its GCS in a store the head of an older
// cluster already holds. The oldest holder is not reported: its GCS has the lock and works.
func gcsStoreShared(ix *index, c *clusterView) []Finding {
	if ix.gcsStores == nil {
		ix.gcsStores = indexGCSStores(ix.clusters)
	}
	for _, h := range c.heads {
		s, ok := ray.GCSStoreOf(h)
		if !ok || h.DeletionTimestamp != nil || ray.Terminal(h) {
			continue
		}
		holders := ix.gcsStores[gcsStoreKey(h.Namespace, s)]
		first := holders[0]
		if first.cluster == c {
			continue // the lock's holder, or a second head of its own cluster (head-duplicate)
		}
		return []Finding{gcsStoreSharedFinding(c, h, s, first)}
	}
	return nil
}

func gcsStoreSharedFinding(c *clusterView, h *corev1.Pod, s ray.GCSStore, first gcsStoreHolder) Finding {
	where := "PVC " + s.Claim
	if s.Dir != "" {
		where += " (directory " + s.Dir + ")"
	}
	ev := map[string]string{"pod": h.Name, "claim": s.Claim, "holder": first.cluster.rc.Name, "holderPod": first.head.Name, "phase": string(h.Status.Phase)}
	if s.Dir != "" {
		ev["dir"] = s.Dir
	}
	msg := fmt.Sprintf("%s keeps its GCS in the RocksDB store on %s, which the head of RayCluster %s (%s, %s) already holds: "+
		"RocksDB admits one writer, so this head's GCS cannot open the store (or, on a ReadWriteOnce claim, cannot attach it) "+
		"and the cluster never becomes ready while %s runs (its head: %s)",
		c.what(), where, first.cluster.rc.Name, first.head.Name, podState(first.head), first.cluster.rc.Name, podState(h))
	remedy := "give each RayCluster a store of its own: remove spec.gcsFaultToleranceOptions.storage.claimName from " + c.rc.Name +
		" (the operator then makes " + c.rc.Name + "-gcs-pvc) or point it at a claim, or a storage.subPath, no other cluster uses"
	if svc := c.service; svc != nil && first.cluster.service == svc {
		ev["rayService"] = svc.Name
		msg += fmt.Sprintf("; both are RayService %s's clusters, so its zero-downtime (NewCluster) upgrade never completes: "+
			"the pending cluster never becomes ready and the active one is never torn down", svc.Name)
		remedy = "a NewCluster upgrade runs the old and new cluster at once, and they cannot share one RocksDB store: remove " +
			"spec.rayClusterConfig.gcsFaultToleranceOptions.storage.claimName from RayService " + svc.Name +
			" (each cluster then gets a store of its own, and the GCS state is not carried over), or keep the GCS in Redis " +
			"(backend: redis), which has no single writer; KubeRay v1.7.0 has no upgrade that hands one store over"
	}
	return c.finding(RuleGCSStoreShared, state.PodRef(h), msg, remedy, ev)
}

// gcsStoreUnschedulable is the claim of head p's RocksDB GCS store and its fix, when the
// scheduler's message says that claim keeps p from being placed: it does not exist (KubeRay
// v1.7.0 creates no claim named by storage.claimName, and only warns, with an Event
// FailedToCreatePVC, "the head Pod will not start until it exists"), or it is not bound (its
// own <cluster>-gcs-pvc with no default StorageClass, or one that provisions nothing).
func gcsStoreUnschedulable(c *clusterView, p *corev1.Pod, schedulerMessage string) (claim, remedy string, ok bool) {
	s, ok := ray.GCSStoreOf(p)
	if !ok {
		return "", "", false
	}
	ns := p.Namespace
	switch {
	case strings.Contains(schedulerMessage, `persistentvolumeclaim "`+s.Claim+`" not found`):
		return s.Claim, "create PVC " + s.Claim + " in namespace " + ns + ": spec.gcsFaultToleranceOptions.storage.claimName names it, and the operator never creates a claim it is given; " +
			"or remove storage.claimName from " + c.rc.Name + ", and the operator makes " + c.rc.Name + "-gcs-pvc", true
	case strings.Contains(schedulerMessage, "unbound immediate PersistentVolumeClaims"):
		return s.Claim, "bind PVC " + s.Claim + " (kubectl describe pvc " + s.Claim + " -n " + ns + "): no volume matches it, or its StorageClass (the default one, when " +
			"storage.storageClassName is unset) provisions none; set spec.gcsFaultToleranceOptions.storage.storageClassName to one that does", true
	}
	return "", "", false
}

// RuleGCSStoreUpgradeBlocked: a RayService whose clusters keep their GCS in one RocksDB store
// that every generation shares (storage.claimName, as KubeRay's sample suggests for keeping GCS
// state across upgrades) cannot complete a zero-downtime upgrade: the upgrade runs the old and the
// new cluster at once, and gcs-store-shared says what then happens. Judged before the upgrade,
// from the document (doctor -f) or from the active cluster's head.
const RuleGCSStoreUpgradeBlocked = "gcs-store-upgrade-blocked"

// gcsStoreUpgradeBlocked reports the RayService's active cluster (or, from a file, the cluster
// its spec makes) when its store is a claim of the user's and its upgrades run two clusters.
func gcsStoreUpgradeBlocked(ix *index, c *clusterView) []Finding {
	rs := c.service
	if rs == nil || c.rc.DeletionTimestamp != nil {
		return nil
	}
	if active := rs.Status.ActiveServiceStatus.RayClusterName; active != "" && active != c.rc.Name ||
		rs.Status.PendingServiceStatus.RayClusterName != "" {
		return nil // an upgrade under way: gcs-store-shared judges it
	}
	strategy := rayv1.RayServiceNewCluster
	if u := rs.Spec.UpgradeStrategy; u != nil && u.Type != nil {
		strategy = *u.Type
	}
	if strategy == rayv1.RayServiceUpgradeNone {
		return nil // no upgrade runs two clusters
	}
	claim, from, field := "", "", ""
	if d, ok := ix.s.GCSStoresDeclared[key(c.rc.Namespace, c.rc.Name)]; ok {
		claim, from, field = d.ClaimName, "spec.rayClusterConfig.gcsFaultToleranceOptions.storage.claimName", "spec.gcsFaultToleranceOptions.storage.claimName"
	} else {
		for _, h := range c.liveHeads() {
			if s, ok := ray.GCSStoreOf(h); ok && s.Claim != ray.OwnClaim(c.rc.Name) {
				claim, from = s.Claim, "head pod "+h.Name+"'s GCS store"
			}
		}
	}
	if claim == "" {
		return nil
	}
	ev := map[string]string{"claim": claim, "upgradeStrategy": string(strategy), "rayService": rs.Name}
	msg := fmt.Sprintf("RayService %s keeps its GCS in a RocksDB store on PVC %s (%s), which every cluster it makes shares: "+
		"its next %s upgrade runs the new cluster beside the old one, whose head holds the store; RocksDB admits one writer, "+
		"so the new cluster never becomes ready and the upgrade never completes (gcs-store-shared then fires)",
		key(rs.Namespace, rs.Name), claim, from, strategy)
	remedy := "before changing the RayService's cluster spec, remove storage.claimName (each cluster gets a store of its own; the GCS state is not carried over) " +
		"or keep the GCS in Redis (backend: redis); KubeRay v1.7.0 has no upgrade that hands one store over"
	f := c.finding(RuleGCSStoreUpgradeBlocked, state.ClusterRef(c.rc), msg, remedy, ev)
	f.Field = field // a document's line (doctor -f); relative to a RayCluster, as the spec rules' fields are
	return []Finding{f}
}
