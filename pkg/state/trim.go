package state

import (
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// A listed pod is ~8 KiB in memory and a RayCluster with its pod templates another ~8 KiB; at
// 5,000 pods and 1,000 clusters that was most of doctor's heap. The rules and repair plans read
// little of either, so the loader trims each object as its page arrives, after collecting the
// secret values of what it drops (the redactor must still know them). TestTrimChangesNothing
// runs every rule fixture and repair plan on trimmed and untrimmed snapshots and requires the
// same output: a rule that starts reading a dropped field fails it.

// TrimPod keeps of a pod its identity, labels, owners, deletion and creation times, node,
// restart policy, the name of its first container (and a head's dashboard port, when not the
// default, the env of Ray's token authentication and where its RocksDB GCS store lives) and the
// status rules read (phase, reason, message, start time, conditions, container states); the
// secret values of its spec go into secrets. Strings that repeat across pods are shared (see intern).
func TrimPod(p *corev1.Pod, secrets redact.Set) { trimPod(p, secrets, shared) }

// TrimPodToPack trims p as TrimPod does but shares none of its strings: for a pod encoded at
// once (the long-running modes' cache), whose shared copies would only fill the tables.
func TrimPodToPack(p *corev1.Pod, secrets redact.Set) { trimPod(p, secrets, unshared) }

func trimPod(p *corev1.Pod, secrets redact.Set, sh sharing) {
	secrets.AddPodSpec(&p.Spec)
	p.ObjectMeta = trimMeta(&p.ObjectMeta)
	sh.meta(&p.ObjectMeta)
	spec := corev1.PodSpec{
		NodeName:                      sh.str(p.Spec.NodeName),
		RestartPolicy:                 p.Spec.RestartPolicy,
		TerminationGracePeriodSeconds: p.Spec.TerminationGracePeriodSeconds,
	}
	if len(p.Spec.Containers) > 0 {
		// The first container's name only: KubeRay takes it as the Ray container. A head keeps
		// a dashboard port other than Ray's default, which doctor --ray forwards to.
		spec.Containers = sh.rayContainer(p.Spec.Containers[0].Name)
		if port, ok := dashboardPortOf(&p.Spec.Containers[0]); ok {
			spec.Containers = []corev1.Container{{Name: spec.Containers[0].Name, Ports: []corev1.ContainerPort{port}}}
		}
		// A head keeps how its Ray asks for a token (ray.AuthOf): doctor --ray reads the token
		// where the pod gets it. An inline token's value is in secrets already.
		if env := ray.AuthEnv(p.Spec.Containers[0].Env); len(env) > 0 && ray.IsHead(p) {
			c := spec.Containers[0]
			c.Env = env
			spec.Containers = []corev1.Container{c}
		}
		// A head keeps where its RocksDB GCS store lives (ray.GCSStoreOf): gcs-store-shared
		// compares the heads' stores.
		if ray.IsHead(p) {
			if env, mounts, volumes, ok := ray.GCSStoreSpec(p); ok {
				c := spec.Containers[0]
				c.Env = append(append([]corev1.EnvVar(nil), c.Env...), env...)
				c.VolumeMounts = mounts
				spec.Containers = []corev1.Container{c}
				spec.Volumes = volumes
			}
		}
	}
	p.Spec = spec
	p.Status = trimPodStatus(&p.Status, sh)
}

// dashboardPortOf is c's port named "dashboard" (KubeRay's name) when it is not Ray's default.
func dashboardPortOf(c *corev1.Container) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		if p.Name == ray.DashboardPortName && p.ContainerPort != ray.DefaultDashboardPort {
			return corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort}, true
		}
	}
	return corev1.ContainerPort{}, false
}

// trimPodStatus keeps the pod IP (Ray's node table names nodes by it) and drops the other
// addresses, the QoS class and the container runtime's IDs and resources, which no rule or plan
// reads, and shares the strings that repeat.
func trimPodStatus(s *corev1.PodStatus, sh sharing) corev1.PodStatus {
	out := corev1.PodStatus{
		Phase:                 s.Phase,
		PodIP:                 s.PodIP, // Ray's node table names nodes by it (doctor --ray)
		Reason:                sh.str(s.Reason),
		Message:               s.Message,
		StartTime:             s.StartTime,
		NominatedNodeName:     s.NominatedNodeName,
		Conditions:            readConditions(s.Conditions),
		InitContainerStatuses: trimContainerStatuses(s.InitContainerStatuses, sh),
		ContainerStatuses:     trimContainerStatuses(s.ContainerStatuses, sh),
	}
	for i := range out.Conditions {
		c := &out.Conditions[i]
		c.Type, c.Reason = corev1.PodConditionType(sh.str(string(c.Type))), sh.str(c.Reason)
		c.Status, c.LastProbeTime = corev1.ConditionStatus(sh.str(string(c.Status))), metav1.Time{}
	}
	return out
}

// readConditions keeps the pod conditions rules read (Ready, PodScheduled, DisruptionTarget)
// and, when another changed later than all of them, that one too: failedAt dates a terminal pod
// by its latest condition change. A kubelet sets five conditions on every pod, kwok three; most
// are never read, and at 20,000 pods they were 7 MB of doctor's heap.
func readConditions(in []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	var latest, latestKept time.Time
	last := -1
	for i, c := range in {
		if !c.LastTransitionTime.Time.Before(latest) {
			latest, last = c.LastTransitionTime.Time, i
		}
		switch c.Type {
		case corev1.PodReady, corev1.PodScheduled, corev1.DisruptionTarget:
			out = append(out, c)
			if c.LastTransitionTime.After(latestKept) {
				latestKept = c.LastTransitionTime.Time
			}
		}
	}
	if last >= 0 && latest.After(latestKept) {
		out = append(out, in[last])
	}
	return out
}

func trimContainerStatuses(in []corev1.ContainerStatus, sh sharing) []corev1.ContainerStatus {
	if len(in) == 0 {
		return in
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, cs := range in {
		out[i] = corev1.ContainerStatus{
			Name:                 sh.str(cs.Name),
			Image:                sh.str(cs.Image),
			Ready:                cs.Ready,
			Started:              cs.Started,
			RestartCount:         cs.RestartCount,
			State:                cs.State,
			LastTerminationState: cs.LastTerminationState,
		}
		trimState(&out[i].State, sh)
		trimState(&out[i].LastTerminationState, sh)
	}
	return out
}

func trimState(s *corev1.ContainerState, sh sharing) {
	if s.Waiting != nil {
		s.Waiting.Reason = sh.str(s.Waiting.Reason)
	}
	if s.Terminated != nil {
		s.Terminated.Reason, s.Terminated.ContainerID = sh.str(s.Terminated.Reason), ""
	}
}

// TrimCluster drops of a RayCluster's pod templates all but what the rules read (specTemplate)
// and its annotations but the ones rules read; the secret values of what goes go into secrets.
func TrimCluster(rc *rayv1.RayCluster, secrets redact.Set) {
	secrets.AddClusterSpec(&rc.Spec)
	meta := trimMeta(&rc.ObjectMeta)
	for _, k := range []string{ray.AnnotationFTEnabled, ray.AnnotationDisableProvisionedHeadRestart, ray.AnnotationExternalStorageNS, ray.AnnotationGCSFTDeletionTimeout} {
		if v, ok := rc.Annotations[k]; ok {
			if meta.Annotations == nil {
				meta.Annotations = map[string]string{}
			}
			meta.Annotations[k] = v
		}
	}
	shared.meta(&meta)
	rc.ObjectMeta = meta
	rc.Spec.HeadGroupSpec.Template = specTemplate(&rc.Spec.HeadGroupSpec.Template)
	rc.Spec.HeadGroupSpec.RayStartParams = internLabels(rc.Spec.HeadGroupSpec.RayStartParams)
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		g.Template = specTemplate(&g.Template)
		g.RayStartParams = internLabels(g.RayStartParams)
	}
}

// internRequirements shares a container's or pod's requests and limits (internResources).
func internRequirements(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	r.Requests, r.Limits = internResources(r.Requests), internResources(r.Limits)
	return r
}

// specTemplate keeps of a group's pod template what the rules read: each container's and init
// container's name, image and resources (Ray's view judges what a group can run from them,
// ray-demand-infeasible; the spec rules rank the head for eviction, find the Ray container) and
// its RAY_gcs_rpc_server_reconnect_timeout_s and /dev/shm mount, the sized emptyDir volumes, the
// pod's resources, its priority class and the cluster autoscaler's safe-to-evict annotation.
// Commands, the rest of env and the other volumes go.
func specTemplate(t *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	keep := func(cs []corev1.Container) []corev1.Container {
		if len(cs) == 0 {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: intern(c.Name), Image: intern(c.Image), Resources: internRequirements(c.Resources), RestartPolicy: c.RestartPolicy}
			for _, e := range c.Env {
				if e.Name == ray.EnvGCSReconnectTimeout && e.ValueFrom == nil {
					out[i].Env = []corev1.EnvVar{{Name: e.Name, Value: e.Value}} // a number of seconds, never a secret
				}
			}
			for _, m := range c.VolumeMounts {
				if strings.TrimRight(m.MountPath, "/") == ray.ShmPath {
					out[i].VolumeMounts = []corev1.VolumeMount{{Name: m.Name, MountPath: m.MountPath}}
				}
			}
		}
		return keptContainers.shared(out)
	}
	// Volumes keep their names and places (findings name volumes[i]); of their sources only
	// the sized emptyDirs a container may mount at /dev/shm.
	var shm []corev1.Volume
	for _, v := range t.Spec.Volumes {
		kept := corev1.Volume{Name: intern(v.Name)}
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
			kept.EmptyDir = v.EmptyDir
		}
		shm = append(shm, kept)
	}
	out := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Volumes:           shm,
		Containers:        keep(t.Spec.Containers),
		InitContainers:    keep(t.Spec.InitContainers),
		Resources:         t.Spec.Resources,
		PriorityClassName: intern(t.Spec.PriorityClassName),
	}}
	if v, ok := t.Annotations[ray.AnnotationSafeToEvict]; ok {
		out.Annotations = map[string]string{ray.AnnotationSafeToEvict: v}
	}
	return out
}

// trimMeta drops annotations (kubectl's last-applied-configuration alone can be larger than the
// object, and no rule reads a pod's) and field-manager bookkeeping; the rest of the metadata is
// small and rules quote it (finalizers of a pod stuck terminating, owners, times).
func trimMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := *m
	out.Annotations, out.ManagedFields = nil, nil
	return out
}

// TrimJob keeps of a Redis cleanup Job its identity, labels, owners, the storage-namespace
// annotation, suspend, deadline and whole status; its pod template (the head's, with the Redis
// address and password) goes, its secret values into secrets.
func TrimJob(j *batchv1.Job, secrets redact.Set) {
	secrets.AddPodSpec(&j.Spec.Template.Spec)
	meta := trimMeta(&j.ObjectMeta)
	if v, ok := j.Annotations[ray.AnnotationExternalStorageNS]; ok {
		meta.Annotations = map[string]string{ray.AnnotationExternalStorageNS: v}
	}
	j.ObjectMeta = meta
	j.Spec = batchv1.JobSpec{Suspend: j.Spec.Suspend, ActiveDeadlineSeconds: j.Spec.ActiveDeadlineSeconds, BackoffLimit: j.Spec.BackoffLimit}
}

// TrimNode keeps a node's name, taints, cordon and conditions. A node's status lists every image
// it holds; across a large cluster's nodes that outweighs everything doctor reads of them.
func TrimNode(n *corev1.Node) {
	n.ObjectMeta = trimMeta(&n.ObjectMeta)
	n.Spec = corev1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable}
	n.Status = corev1.NodeStatus{Conditions: n.Status.Conditions}
}

// Trimmed is a copy of s trimmed as the loader trims each page, s left as it is. Tests use it to
// prove that no rule or plan reads what trimming drops.
func Trimmed(s *Snapshot) *Snapshot {
	t := *s
	t.Secrets = redact.Set{}
	t.Secrets.Merge(s.Secrets)
	t.Pods = trimmedCopy(s.Pods, func(p *corev1.Pod) { TrimPod(p, t.Secrets) })
	t.Clusters = trimmedCopy(s.Clusters, func(c *rayv1.RayCluster) { TrimCluster(c, t.Secrets) })
	t.CleanupJobs = trimmedCopy(s.CleanupJobs, func(j *batchv1.Job) { TrimJob(j, t.Secrets) })
	t.Nodes = trimmedCopy(s.Nodes, TrimNode)
	if s.Admission != nil {
		t.Nodes = trimmedCopy(s.Nodes, TrimNodeForFit) // doctor -f's nodes, for the admission rules
	}
	return &t
}

// trimmedCopy deep-copies each object of in and trims the copy.
func trimmedCopy[T any, P interface {
	*T
	DeepCopyInto(*T)
}](in []T, trim func(*T)) []T {
	out := make([]T, len(in))
	for i := range in {
		P(&in[i]).DeepCopyInto(&out[i])
		trim(&out[i])
	}
	return out
}

// TrimEvent keeps what the rules read: the object, reason, message, count and times.
func TrimEvent(ev *corev1.Event) {
	*ev = corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: ev.Name, Namespace: ev.Namespace, UID: ev.UID, CreationTimestamp: ev.CreationTimestamp},
		InvolvedObject: ev.InvolvedObject,
		Reason:         ev.Reason,
		Message:        ev.Message,
		Source:         ev.Source,
		Count:          ev.Count,
		FirstTimestamp: ev.FirstTimestamp,
		LastTimestamp:  ev.LastTimestamp,
		EventTime:      ev.EventTime,
		Series:         ev.Series,
		Type:           ev.Type,
	}
}

// TrimNodeForFit keeps what says whether a pod fits a node: its name and labels (node
// selectors, affinity), taints and unschedulable, and allocatable.
func TrimNodeForFit(n *corev1.Node) {
	n.ObjectMeta = metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}
	n.Spec = corev1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable}
	n.Status = corev1.NodeStatus{Allocatable: n.Status.Allocatable}
}
