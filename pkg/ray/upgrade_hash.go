package ray

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // KubeRay's hash, compared, not a safeguard
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strconv"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
)

// What an apply of a RayService that exists does, as KubeRay decides it: it hashes the
// RayService's spec.rayClusterConfig with the fields it does not count muted, and compares that
// with the hash it wrote on the cluster it compares with (the pending cluster while an upgrade is
// under way, else the active one) when it made it. Equal: nothing new. Equal once the worker
// groups appended at the end are left out: the cluster is updated in place. Otherwise a new
// RayCluster is prepared beside it (zero-downtime upgrade), unless upgrades are off.
// (rayservice_controller.go: shouldPrepareNewRayCluster in v1.1.1; shouldPrepareNewCluster and
// isClusterSpecHashEqual in v1.5.0, v1.6.0 and v1.7.0, which hashes rayClusterSpecForHashing;
// GenerateHashWithoutReplicasAndWorkersToDelete.)

// APITypesRelease is the KubeRay release whose API types this program decodes into (go.mod's
// ray-operator module): what it hashes of a spec is what those types hold.
const APITypesRelease = "v1.6.2"

// The annotations KubeRay writes on a RayService's cluster (utils/constant.go, all three).
const (
	AnnotationClusterHash     = "ray.io/hash-without-replicas-and-workers-to-delete"
	AnnotationNumWorkerGroups = "ray.io/num-worker-groups"
	AnnotationKubeRayVersion  = "ray.io/kuberay-version"
)

// ComparedCluster is the RayCluster KubeRay compares a RayService's spec with, as its
// annotations say.
type ComparedCluster struct {
	Name string
	// Pending: an upgrade is under way and this is its new cluster.
	Pending bool
	// The annotations KubeRay wrote on it (AnnotationClusterHash and the others), "" when absent.
	Hash, NumWorkerGroups, KubeRayVersion string
	// Spec is its spec as stored: KubeRay v1.1 compares a pending cluster's spec, not its
	// annotation (getClusterAction).
	Spec *rayv1.RayClusterSpec
}

// ComparedClusterOf is what rc says for a ComparedCluster.
func ComparedClusterOf(rc *rayv1.RayCluster, pending bool) *ComparedCluster {
	return &ComparedCluster{Name: rc.Name, Pending: pending, Hash: rc.Annotations[AnnotationClusterHash],
		NumWorkerGroups: rc.Annotations[AnnotationNumWorkerGroups], KubeRayVersion: rc.Annotations[AnnotationKubeRayVersion],
		Spec: rc.Spec.DeepCopy()}
}

// ApplyVerdict is what KubeRay does with a RayService document applied over one that exists.
type ApplyVerdict int

const (
	// VerdictUnknown: not judged (why says so); the admission rules judge a new cluster.
	VerdictUnknown ApplyVerdict = iota
	// VerdictUnchanged: the hashes are equal; no new cluster, replicas go to the cluster in place.
	VerdictUnchanged
	// VerdictAppended: equal once the appended worker groups are left out; updated in place.
	VerdictAppended
	// VerdictNewCluster: a new RayCluster beside the one compared, unless upgrades are off.
	VerdictNewCluster
)

// JudgeApply is what KubeRay release would do with spec applied over the RayService whose cluster
// compared with is cc. Only releases whose source was read are judged (v1.1, v1.5, v1.6, v1.7); an
// active cluster another release made is not (from v1.5.0 KubeRay first updates such a cluster in
// place, to write its own hash: shouldUpdateCluster; a pending one is compared as it is).
func JudgeApply(spec *rayv1.RayClusterSpec, cc *ComparedCluster, release string) (ApplyVerdict, string) {
	v, err := version.ParseSemantic(release)
	if err != nil {
		return VerdictUnknown, "the operator's release is not known"
	}
	mute, ok := hashings[fmt.Sprintf("v%d.%d", v.Major(), v.Minor())]
	if !ok {
		return VerdictUnknown, "how KubeRay " + release + " hashes a cluster spec is not known here (v1.1, v1.5, v1.6 and v1.7 are)"
	}
	want, groups := cc.Hash, cc.NumWorkerGroups
	if v.Minor() == 1 && cc.Pending && cc.Spec != nil {
		// v1.1 compares with a pending cluster's spec itself (getClusterAction).
		h, err := clusterHash(cc.Spec, mute)
		if err != nil {
			return VerdictUnknown, err.Error()
		}
		want, groups = h, strconv.Itoa(len(cc.Spec.WorkerGroupSpecs))
	}
	if want == "" {
		return VerdictUnknown, "cluster " + cc.Name + " has no " + AnnotationClusterHash + " annotation"
	}
	if !cc.Pending && v.AtLeast(version.MustParseSemantic("v1.5.0")) && cc.KubeRayVersion != "v"+v.String() && cc.KubeRayVersion != release {
		return VerdictUnknown, fmt.Sprintf("cluster %s was made by KubeRay %q, not %s, which first updates it in place with its own hash", cc.Name, cc.KubeRayVersion, release)
	}
	stored := spec.DeepCopy()
	crdDefaults(stored, v)
	if h, err := clusterHash(stored, mute); err != nil {
		return VerdictUnknown, err.Error()
	} else if h == want {
		return VerdictUnchanged, ""
	}
	if n, err := strconv.Atoi(groups); err == nil && n < len(stored.WorkerGroupSpecs) {
		first := stored.DeepCopy()
		first.WorkerGroupSpecs = first.WorkerGroupSpecs[:n]
		if h, err := clusterHash(first, mute); err == nil && h == want {
			return VerdictAppended, ""
		}
	}
	return VerdictNewCluster, ""
}

// hashing is how one KubeRay release hashes a cluster spec: the fields it clears first, and how
// its API machinery serializes what is left.
type hashing struct {
	mute func(*rayv1.RayClusterSpec)
	// legacy is how v1.1.1's types write a spec where these (v1.5.0's) write it otherwise: the
	// fields of its own Ray types in their order (the rest it does not hold, and its CRD prunes),
	// and "creationTimestamp":null in each pod template's metadata, which its older API machinery
	// writes and this program's (omitzero) does not. Checked against the JSON v1.1.1's types
	// write (TestV11WritesV111sJSON).
	legacy *fieldOrder
	// stored adds to the JSON what the release's CRD defaults in fields these types do not hold.
	stored func([]byte) ([]byte, error)
}

// fieldOrder is, for the Ray types of a cluster spec, their JSON fields in one release's order.
type fieldOrder struct{ spec, head, worker, autoscaler []string }

// v111Order is KubeRay v1.1.1's (apis/ray/v1/raycluster_types.go).
var v111Order = &fieldOrder{
	spec:       []string{"headGroupSpec", "workerGroupSpecs", "rayVersion", "enableInTreeAutoscaling", "autoscalerOptions", "headServiceAnnotations", "suspend"},
	head:       []string{"serviceType", "headService", "enableIngress", "rayStartParams", "template"},
	worker:     []string{"groupName", "replicas", "minReplicas", "maxReplicas", "numOfHosts", "rayStartParams", "template", "scaleStrategy"},
	autoscaler: []string{"resources", "image", "imagePullPolicy", "env", "envFrom", "volumeMounts", "securityContext", "idleTimeoutSeconds", "upscalingMode"},
}

// hashings are, by release, how KubeRay hashes a cluster spec.
var hashings = map[string]hashing{
	"v1.1": {legacy: v111Order, mute: func(s *rayv1.RayClusterSpec) {
		for i := range s.WorkerGroupSpecs {
			w := &s.WorkerGroupSpecs[i]
			w.Replicas, w.ScaleStrategy.WorkersToDelete = nil, nil
		}
	}},
	"v1.5": {mute: muteScale},
	"v1.6": {mute: muteV16},
	"v1.7": {stored: withWorkerPriority, mute: func(s *rayv1.RayClusterSpec) {
		muteV16(s)
		// v1.7.0 hashes rayClusterSpecForHashing: the spec with suspend cleared, so that a
		// RayService's own spec.suspend never makes a new cluster.
		s.Suspend = nil
	}},
}

// v17WorkerOrder is KubeRay v1.7.0's WorkerGroupSpec fields in its order (apis/ray/v1); these
// types hold every one of them but priority, in the same order.
var v17WorkerOrder = []string{"suspend", "groupName", "replicas", "minReplicas", "maxReplicas", "idleTimeoutSeconds",
	"priority", "resources", "labels", "rayStartParams", "template", "scaleStrategy", "numOfHosts"}

// withWorkerPriority is b, a cluster spec's JSON, with each worker group's priority as v1.7.0's
// CRD stores it when the document leaves it out (default 0), where v1.7.0's types write it. A
// document that sets priority is not judged: these types do not hold it (Snapshot.Undecoded).
func withWorkerPriority(b []byte) ([]byte, error) {
	return ordered(b, specFields(b), map[string]func([]byte) ([]byte, error){
		"workerGroupSpecs": func(ws []byte) ([]byte, error) {
			var groups []map[string]json.RawMessage
			if err := json.Unmarshal(ws, &groups); err != nil || groups == nil {
				return ws, err
			}
			out := []byte("[")
			for i, g := range groups {
				if _, ok := g["priority"]; !ok {
					g["priority"] = json.RawMessage("0")
				}
				raw, err := json.Marshal(g)
				if err != nil {
					return nil, err
				}
				w, err := ordered(raw, v17WorkerOrder, nil)
				if err != nil {
					return nil, err
				}
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, w...)
			}
			return append(out, ']'), nil
		},
	})
}

// specFields are the top-level fields of the JSON object b in the order they are written.
func specFields(b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// muteV16 is what v1.6.0 clears: the scale, and what external controllers inject.
func muteV16(s *rayv1.RayClusterSpec) {
	muteScale(s)
	// Fields external controllers (Kueue) inject after creation.
	s.HeadGroupSpec.Template.Spec.Tolerations, s.HeadGroupSpec.Template.Spec.SchedulingGates = nil, nil
	for i := range s.WorkerGroupSpecs {
		t := &s.WorkerGroupSpecs[i].Template.Spec
		t.Tolerations, t.SchedulingGates = nil, nil
	}
	// v1.6.0 also clears spec.upgradeStrategy (a RayCluster's own, since v1.6.0).
	s.UpgradeStrategy = nil
}

// muteScale clears what the autoscaler changes: replicas, their bounds and the workers to delete.
func muteScale(s *rayv1.RayClusterSpec) {
	for i := range s.WorkerGroupSpecs {
		w := &s.WorkerGroupSpecs[i]
		w.Replicas, w.MinReplicas, w.MaxReplicas, w.ScaleStrategy.WorkersToDelete = nil, nil, nil, nil
	}
}

// clusterHash is KubeRay's GenerateJsonHash of spec as h hashes it: SHA-1 of its JSON, in base32
// (extended hex alphabet).
func clusterHash(spec *rayv1.RayClusterSpec, h hashing) (string, error) {
	s := spec.DeepCopy()
	h.mute(s)
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("the cluster spec does not serialize: %w", err)
	}
	if h.stored != nil {
		if b, err = h.stored(b); err != nil {
			return "", err
		}
	}
	if h.legacy != nil {
		if b, err = withNullCreationTimestamps(b, s); err != nil {
			return "", err
		}
		if b, err = h.legacy.reorder(b); err != nil {
			return "", err
		}
	}
	sum := sha1.Sum(b) //nolint:gosec // KubeRay's hash
	return base32.HexEncoding.EncodeToString(sum[:]), nil
}

// withNullCreationTimestamps is b, the JSON of s, as older API machinery writes it: each pod
// template's metadata with "creationTimestamp":null where its fields put it (after name,
// generateName, namespace, selfLink, uid, resourceVersion and generation, before the rest). The
// templates come in b in the order of s's fields: the head's, then each worker group's.
func withNullCreationTimestamps(b []byte, s *rayv1.RayClusterSpec) ([]byte, error) {
	metas := []*metav1.ObjectMeta{&s.HeadGroupSpec.Template.ObjectMeta}
	for i := range s.WorkerGroupSpecs {
		metas = append(metas, &s.WorkerGroupSpecs[i].Template.ObjectMeta)
	}
	out, rest := []byte{}, b
	for _, m := range metas {
		if !m.CreationTimestamp.IsZero() {
			continue
		}
		now, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		before := metav1.ObjectMeta{Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace, SelfLink: m.SelfLink, //nolint:staticcheck // SelfLink is serialized too
			UID: m.UID, ResourceVersion: m.ResourceVersion, Generation: m.Generation}
		pre, err := json.Marshal(before)
		if err != nil {
			return nil, err
		}
		// now is pre's fields then the others': the null goes between them.
		inner, preInner := now[1:len(now)-1], pre[1:len(pre)-1]
		legacy := append([]byte("{"), preInner...)
		if len(preInner) > 0 {
			legacy = append(legacy, ',')
		}
		legacy = append(legacy, `"creationTimestamp":null`...)
		if post := inner[len(preInner):]; len(post) > 0 {
			if len(preInner) == 0 {
				legacy = append(legacy, ',')
			}
			legacy = append(legacy, post...)
		}
		legacy = append(legacy, '}')
		at := bytes.Index(rest, append([]byte(`"template":{"metadata":`), now...))
		if at < 0 {
			return nil, fmt.Errorf("a pod template's metadata was not found in the cluster spec's JSON")
		}
		at += len(`"template":{"metadata":`)
		out = append(out, rest[:at]...)
		out = append(out, legacy...)
		rest = rest[at+len(now):]
	}
	return append(out, rest...), nil
}

// reorder writes b, a cluster spec's JSON, with the Ray types' fields in o's order, dropping the
// fields o does not list; what is inside them (Kubernetes' types) is kept as it is.
func (o *fieldOrder) reorder(b []byte) ([]byte, error) {
	spec, err := ordered(b, o.spec, map[string]func([]byte) ([]byte, error){
		"headGroupSpec": func(h []byte) ([]byte, error) { return ordered(h, o.head, nil) },
		"autoscalerOptions": func(a []byte) ([]byte, error) {
			if string(a) == "null" {
				return a, nil
			}
			return ordered(a, o.autoscaler, nil)
		},
		"workerGroupSpecs": func(ws []byte) ([]byte, error) {
			var groups []json.RawMessage
			if err := json.Unmarshal(ws, &groups); err != nil || groups == nil {
				return ws, err
			}
			out := []byte("[")
			for i, g := range groups {
				w, err := ordered(g, o.worker, nil)
				if err != nil {
					return nil, err
				}
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, w...)
			}
			return append(out, ']'), nil
		},
	})
	return spec, err
}

// ordered writes the JSON object b with the fields of order, in that order (those b has), each
// through inner[field] when there is one.
func ordered(b []byte, order []string, inner map[string]func([]byte) ([]byte, error)) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	out := []byte("{")
	for _, k := range order {
		v, ok := fields[k]
		if !ok {
			continue
		}
		if f := inner[k]; f != nil {
			var err error
			if v, err = f(v); err != nil {
				return nil, err
			}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(k)
		out = append(append(append(out, key...), ':'), v...)
	}
	return append(out, '}'), nil
}

// crdDefaults sets in spec what the API server sets when it stores a RayService: the defaults of
// the release's CRD under spec.rayClusterConfig (config/crd/bases/ray.io_rayservices.yaml), which
// KubeRay hashes as stored. Every default of those CRDs is here, but for names of references
// ("" on an omitempty string, which serializes as absent).
func crdDefaults(spec *rayv1.RayClusterSpec, v *version.Version) {
	since15 := v.AtLeast(version.MustParseSemantic("v1.5.0"))
	pod := func(p *corev1.PodSpec) {
		for _, cs := range [][]corev1.Container{p.InitContainers, p.Containers} {
			for i := range cs {
				containerDefaults(&cs[i], since15)
			}
		}
		for i := range p.EphemeralContainers {
			c := corev1.Container(p.EphemeralContainers[i].EphemeralContainerCommon)
			containerDefaults(&c, since15)
			p.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
		}
		if since15 {
			for i := range p.Volumes {
				volumeDefaults(&p.Volumes[i].VolumeSource)
			}
		}
	}
	pod(&spec.HeadGroupSpec.Template.Spec)
	if hs := spec.HeadGroupSpec.HeadService; hs != nil {
		for i := range hs.Spec.Ports {
			if hs.Spec.Ports[i].Protocol == "" {
				hs.Spec.Ports[i].Protocol = corev1.ProtocolTCP
			}
		}
	}
	for i := range spec.WorkerGroupSpecs {
		w := &spec.WorkerGroupSpecs[i]
		pod(&w.Template.Spec)
		if w.Replicas == nil {
			w.Replicas = ptr.To[int32](0)
		}
		if w.MinReplicas == nil {
			w.MinReplicas = ptr.To[int32](0)
		}
		if w.MaxReplicas == nil {
			w.MaxReplicas = ptr.To[int32](2147483647)
		}
		if w.NumOfHosts == 0 {
			w.NumOfHosts = 1
		}
	}
}

func containerDefaults(c *corev1.Container, since15 bool) {
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	if !since15 {
		return
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil && p.GRPC != nil && p.GRPC.Service == nil {
			p.GRPC.Service = ptr.To("")
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
			vf.FileKeyRef.Optional = ptr.To(false)
		}
	}
}

func volumeDefaults(v *corev1.VolumeSource) {
	if d := v.AzureDisk; d != nil {
		if d.FSType == nil {
			d.FSType = ptr.To("ext4")
		}
		if d.ReadOnly == nil {
			d.ReadOnly = ptr.To(false)
		}
	}
	if d := v.ISCSI; d != nil {
		orDefault(&d.ISCSIInterface, "default")
	}
	if d := v.RBD; d != nil {
		orDefault(&d.Keyring, "/etc/ceph/keyring")
		orDefault(&d.RBDPool, "rbd")
		orDefault(&d.RadosUser, "admin")
	}
	if d := v.ScaleIO; d != nil {
		orDefault(&d.FSType, "xfs")
		orDefault(&d.StorageMode, "ThinProvisioned")
	}
}

// orDefault sets *field to def when it is empty, as a CRD default does.
func orDefault(field *string, def string) {
	if *field == "" {
		*field = def
	}
}
