package upgrade

import (
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Tracker turns what the watches see into the upgrade's timeline. It is safe for concurrent use:
// each watch calls it from its own goroutine. It is experiment.Run's Tracker: the disruptive
// step is the patch, and "recovered" is the switch done and the old cluster deleted.
type Tracker struct {
	follow.Record

	rayService string
	old        string // the active cluster when the run started
	patched    bool

	rsSeen          bool
	active, pending string
	lastStatus      rayv1.RayServiceStatuses
	headReady       map[string]readyHead // first Ready head per cluster (not the old one)
	headEmitted     map[string]bool
	appsEmitted     map[string]bool
	switched        bool
	oldDeleted      bool
	// An incremental upgrade's shares per cluster as last seen ("" when unset), and whether the
	// RayService was last seen rolling back.
	capacity, traffic map[string]string
	rollingBack       bool
}

type readyHead struct {
	pod string
	at  time.Time
}

// NewTracker follows the upgrade of rayService away from its active cluster old.
func NewTracker(rayService, old string) *Tracker {
	return &Tracker{rayService: rayService, old: old, headReady: map[string]readyHead{},
		headEmitted: map[string]bool{}, appsEmitted: map[string]bool{}, capacity: map[string]string{}, traffic: map[string]string{}}
}

// Disrupted records the patch (experiment.Tracker); what says what it changes.
func (t *Tracker) Disrupted(what string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.patched = true
	t.Add(timeline.Event{Kind: timeline.UpgradePatched, At: at, Object: t.rayService, Detail: what})
}

// Refused records that the API refused the patch.
func (t *Tracker) Refused(detail string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.Add(timeline.Event{Kind: timeline.UpgradeRefused, At: at, Object: t.rayService, Detail: detail})
}

// Pod notes the first Ready head of every cluster but the old one; it becomes an event once the
// RayService names that cluster pending (the pod may be seen Ready first).
func (t *Tracker) Pod(p *corev1.Pod, deleted bool, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	c := p.Labels[ray.LabelCluster]
	if deleted || !ray.IsHead(p) || c == t.old || !ray.RunningReady(p) {
		return
	}
	if _, ok := t.headReady[c]; !ok {
		t.headReady[c] = readyHead{pod: p.Name, at: at}
	}
	t.emitHead()
}

func (t *Tracker) emitHead() {
	c := t.pending
	if c == "" && t.switched {
		c = t.active
	}
	h, ok := t.headReady[c]
	if c == "" || !ok || t.headEmitted[c] || !t.patched {
		return
	}
	t.headEmitted[c] = true
	t.Add(timeline.Event{Kind: timeline.PendingHeadReady, At: h.at, Object: h.pod, Detail: "cluster " + c})
}

// RayCluster records the deletion of the old cluster.
func (t *Tracker) RayCluster(rc *rayv1.RayCluster, deleted bool, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if deleted && rc.Name == t.old && !t.oldDeleted {
		t.oldDeleted = true
		t.Add(timeline.Event{Kind: timeline.OldClusterDeleted, At: at, Object: rc.Name})
	}
}

// RayService records the pending and active clusters as they change, and when a new cluster's
// Serve applications are all RUNNING.
func (t *Tracker) RayService(rs *rayv1.RayService, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	active, pending := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName
	if t.rsSeen {
		if pending != t.pending {
			t.Add(timeline.Event{Kind: timeline.RayServicePendingCluster, At: at, Object: rs.Name, From: t.pending, To: pending})
		}
		if active != t.active {
			t.Add(timeline.Event{Kind: timeline.RayServiceActiveCluster, At: at, Object: rs.Name, From: t.active, To: active})
		}
	}
	t.rsSeen, t.active, t.pending, t.lastStatus = true, active, pending, rs.Status
	if t.patched && active != "" && active != t.old {
		t.switched = true
	}
	t.emitHead()
	if !t.patched {
		return
	}
	t.shares(rs, at)
	// KubeRay may move the pending status to the active one in the same update that makes the
	// apps RUNNING: then they are first seen RUNNING at the switch.
	for _, st := range []struct {
		s    rayv1.RayServiceStatus
		note string
	}{{rs.Status.PendingServiceStatus, ""}, {rs.Status.ActiveServiceStatus, "; first seen RUNNING in the active status"}} {
		c := st.s.RayClusterName
		if c == "" || c == t.old || t.appsEmitted[c] || !appsRunning(st.s) {
			continue
		}
		t.appsEmitted[c] = true
		t.Add(timeline.Event{Kind: timeline.ServeAppsReady, At: at, Object: c, Detail: strings.Join(appNames(st.s), ", ") + st.note})
	}
}

// shares records an incremental upgrade's steps: each cluster's target capacity and traffic as
// they change, and a rollback's start. The statuses of other upgrades leave them unset.
func (t *Tracker) shares(rs *rayv1.RayService, at time.Time) {
	for _, st := range []rayv1.RayServiceStatus{rs.Status.ActiveServiceStatus, rs.Status.PendingServiceStatus} {
		c := st.RayClusterName
		if c == "" {
			continue
		}
		for _, v := range []struct {
			kind  timeline.Kind
			seen  map[string]string
			share *int32
		}{{timeline.ServeTargetCapacity, t.capacity, st.TargetCapacity}, {timeline.TrafficRouted, t.traffic, st.TrafficRoutedPercent}} {
			if v.share == nil {
				continue
			}
			now := fmt.Sprintf("%d%%", *v.share)
			if prev, ok := v.seen[c]; !ok || prev != now {
				v.seen[c] = now
				t.Add(timeline.Event{Kind: v.kind, At: at, Object: c, From: prev, To: now})
			}
		}
	}
	rolling := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RollbackInProgress))
	if on := rolling != nil && rolling.Status == metav1.ConditionTrue; on != t.rollingBack {
		t.rollingBack = on
		if on {
			t.Add(timeline.Event{Kind: timeline.UpgradeRollingBack, At: at, Object: rs.Name, Detail: rolling.Message})
		}
	}
}

// Recovered is the upgrade done: the active cluster switched and the old one is deleted.
func (t *Tracker) Recovered() (bool, time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	return t.switched && t.oldDeleted, t.LastChange
}

// State is the upgrade's part of the progress line.
func (t *Tracker) State() string {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	switch {
	case !t.patched:
		return "active cluster " + t.old + ", not patched yet"
	case t.switched && t.oldDeleted:
		return "switched to " + t.active + ", old cluster " + t.old + " deleted"
	case t.switched:
		return "switched to " + t.active + ", old cluster " + t.old + " not deleted yet"
	}
	return t.lastSeenLocked()
}

// LastSeen is the upgrade as last seen, in words, for the report.
func (t *Tracker) LastSeen() string {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if t.switched {
		s := "traffic on the new cluster " + t.active
		if t.oldDeleted {
			return s + "; the old cluster " + t.old + " deleted"
		}
		return s + "; the old cluster " + t.old + " not deleted yet"
	}
	return t.lastSeenLocked()
}

func (t *Tracker) lastSeenLocked() string {
	if !t.patched {
		return "not patched; traffic on " + t.old
	}
	if t.pending == "" {
		return fmt.Sprintf("no pending cluster; traffic still on %s", t.active)
	}
	head := "its head not Ready"
	if _, ok := t.headReady[t.pending]; ok {
		head = "its head Ready"
	}
	apps := "no Serve app reported"
	shares := ""
	if c, ok := t.capacity[t.pending]; ok {
		shares = fmt.Sprintf(", capacity %s, traffic %s", c, orUnset(t.traffic[t.pending]))
	}
	if st := t.lastStatus.PendingServiceStatus; len(st.Applications) > 0 {
		var parts []string
		for _, n := range appNames(st) {
			parts = append(parts, n+" "+st.Applications[n].Status)
		}
		apps = "apps " + strings.Join(parts, ", ")
	}
	if shares != "" {
		rolling := ""
		if t.rollingBack {
			rolling = "; rolling back"
		}
		return fmt.Sprintf("pending cluster %s%s, %s, %s; active cluster %s, capacity %s, traffic %s%s", t.pending, shares, head, apps,
			t.active, orUnset(t.capacity[t.active]), orUnset(t.traffic[t.active]), rolling)
	}
	return fmt.Sprintf("pending cluster %s, %s, %s; traffic still on %s", t.pending, head, apps, t.active)
}

func appsRunning(s rayv1.RayServiceStatus) bool {
	if len(s.Applications) == 0 {
		return false
	}
	for _, a := range s.Applications {
		if a.Status != rayv1.ApplicationStatusEnum.RUNNING {
			return false
		}
	}
	return true
}

func appNames(s rayv1.RayServiceStatus) []string {
	var out []string
	for n := range s.Applications {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func orUnset(share string) string {
	if share == "" {
		return "unset"
	}
	return share
}
