package diagnose

import (
	"fmt"
	"math"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleSpecRefused: the KubeRay operator would refuse the document and create nothing of it.
// KubeRay's webhook does not run these checks and many teams run no webhook (kuberay #5256,
// #2250), so the first word of the refusal is a Warning Event after the apply, and the cluster
// never starts (spec-invalid, live). The check is KubeRay's own code, not a copy: the
// validation functions the reconcilers of the release this doctor is built with (go.mod) call
// first (controllers/ray/utils/validation.go: ValidateRayClusterMetadata,
// ValidateRayClusterSpec and ValidateRayClusterUpgradeOptions after setDefaults in
// raycluster_controller.go, ValidateRayServiceMetadata and ValidateRayServiceSpec in
// rayservice_controller.go, ValidateRayJobMetadata and ValidateRayJobSpec in
// rayjob_controller.go), with KubeRay's default feature gates. Its message is the operator's
// Event, word for word. The v1.6 line validates alike (validation.go is the same from v1.6.0 to
// v1.6.2); v1.7.0 runs the same functions with more checks (networkPolicy, tlsOptions, the GCS
// storage backend, historyServerOptions); v1.5.0 runs fewer (no authOptions, no
// minReplicas/maxReplicas checks) and words a RayService's refusal without "The RayService spec
// is invalid:"; v1.1.1 validates no RayCluster or RayService spec, and of a RayJob only some of
// what v1.5.0 does.
const RuleSpecRefused = "spec-refused"

// specRefusedAs is the KubeRay release whose validation specRefused runs: the module this doctor
// is built with (go.mod).
const specRefusedAs = ray.APITypesRelease

// firstValidating is the first release whose reconcilers validate a RayCluster's spec (v1.5.0
// is the first this doctor reads with them; v1.1.1 does not).
var firstValidating = version.MustParseSemantic("v1.5.0")

// validatesAlike is the releases whose validation is specRefusedAs's, word for word.
var validatesAlike = releaseSpan{From: version.MustParseSemantic("v1.6.0"), Fixed: version.MustParseSemantic("v1.7.0")}

// validationRefusal is one of the operator's validation errors: the Event it records, and what it is about.
type validationRefusal struct {
	obj    state.Ref
	reason string // the Event's reason: InvalidRayClusterSpec, InvalidRayJobMetadata, ...
	event  string // the Event's message, as the operator formats it
	err    error
	// as is the release whose validation refuses it when not specRefusedAs (v15GatedRefusal,
	// v17GatedRefusal); fix, when set, is the remedy.
	as  string
	fix string
}

// validateAsOperator runs the validation KubeRay's reconciler of c's document runs first: the
// RayCluster's own, or that of the RayService or RayJob that owns it (which validates the
// cluster spec it carries). nil when the operator accepts it.
func validateAsOperator(ix *index, c *clusterView) *validationRefusal {
	nsName := func(ns, name string) string { return ns + "/" + name }
	switch {
	case c.service != nil:
		rs := c.service.DeepCopy()
		generatedName(&rs.ObjectMeta)
		crdDefaults(&rs.Spec.RayClusterSpec)
		ref := serviceRef(rs)
		// rayservice_controller.go's validateRayService: one Event format for both reasons, the
		// errors saying which ("The RayService spec is invalid: ...").
		if err := utils.ValidateRayServiceMetadata(rs.ObjectMeta); err != nil {
			return &validationRefusal{obj: ref, reason: string(utils.InvalidRayServiceMetadata), event: fmt.Sprintf("%s: %v", nsName(rs.Namespace, rs.Name), err), err: err}
		}
		if err := utils.ValidateRayServiceSpec(rs); err != nil {
			return &validationRefusal{obj: ref, reason: string(utils.InvalidRayServiceSpec), event: fmt.Sprintf("%s: %v", nsName(rs.Namespace, rs.Name), err), err: err}
		}
		return nil
	case c.owner != nil && c.owner.Kind == "RayJob":
		j := ix.ownerJob(c)
		if j == nil {
			return nil
		}
		j = j.DeepCopy()
		generatedName(&j.ObjectMeta)
		if j.Spec.RayClusterSpec != nil {
			crdDefaults(j.Spec.RayClusterSpec)
		}
		ref := state.Ref{Kind: "RayJob", Namespace: j.Namespace, Name: j.Name, UID: string(j.UID)}
		// rayjob_controller.go's validateRayJob: one Event format for every reason.
		if err := utils.ValidateRayJobMetadata(j.ObjectMeta); err != nil {
			return &validationRefusal{obj: ref, reason: string(utils.InvalidRayJobMetadata), event: fmt.Sprintf("%s: %v", nsName(j.Namespace, j.Name), err), err: err}
		}
		if err := utils.ValidateRayJobSpec(j); err != nil {
			return &validationRefusal{obj: ref, reason: string(utils.InvalidRayJobSpec), event: fmt.Sprintf("%s: %v", nsName(j.Namespace, j.Name), err), err: err}
		}
		return nil
	case c.owner != nil:
		return nil
	}
	if or := metav1.GetControllerOf(c.rc); or != nil && (or.Kind == "RayService" || or.Kind == "RayJob") {
		return nil // made of an owner's spec (one of two documents of a name): the owner's check is the operator's
	}
	rc := c.rc.DeepCopy()
	generatedName(&rc.ObjectMeta)
	// raycluster_controller.go's setDefaults, which runs before the validation.
	if rc.Spec.HeadGroupSpec.RayStartParams == nil {
		rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{}
	}
	for i := range rc.Spec.WorkerGroupSpecs {
		if rc.Spec.WorkerGroupSpecs[i].RayStartParams == nil {
			rc.Spec.WorkerGroupSpecs[i].RayStartParams = map[string]string{}
		}
	}
	crdDefaults(&rc.Spec)
	ref := state.ClusterRef(c.rc)
	if err := utils.ValidateRayClusterMetadata(rc.ObjectMeta); err != nil {
		return &validationRefusal{obj: ref, reason: eventInvalidMetadata, event: fmt.Sprintf("The RayCluster metadata is invalid %s: %v", nsName(rc.Namespace, rc.Name), err), err: err}
	}
	if err := utils.ValidateRayClusterSpec(&rc.Spec, rc.Annotations); err != nil {
		return &validationRefusal{obj: ref, reason: eventInvalidSpec, event: fmt.Sprintf("The RayCluster spec is invalid %s: %v", nsName(rc.Namespace, rc.Name), err), err: err}
	}
	if err := utils.ValidateRayClusterUpgradeOptions(rc); err != nil {
		return &validationRefusal{obj: ref, reason: eventInvalidSpec, event: fmt.Sprintf("The RayCluster UpgradeStrategy is invalid %s: %v", nsName(rc.Namespace, rc.Name), err), err: err}
	}
	return nil
}

// crdDefaults sets what every release's RayCluster CRD defaults and the validation reads: a
// worker group's minReplicas (0) and maxReplicas (2147483647). The API server sets them on every
// object it stores, so the operator never sees them unset; a document may leave them out.
func crdDefaults(spec *rayv1.RayClusterSpec) {
	for i := range spec.WorkerGroupSpecs {
		w := &spec.WorkerGroupSpecs[i]
		if w.MinReplicas == nil {
			w.MinReplicas = ptr.To[int32](0)
		}
		if w.MaxReplicas == nil {
			w.MaxReplicas = ptr.To[int32](math.MaxInt32)
		}
	}
}

// generatedName gives a document that has only a generateName (KubeRay's Kueue samples) the name
// the API server would: the prefix and 5 characters (names.SimpleNameGenerator), so that the
// operator's name checks judge what it will see.
func generatedName(m *metav1.ObjectMeta) {
	if m.GenerateName != "" && (m.Name == "" || m.Name == m.GenerateName) {
		m.Name = m.GenerateName + "x7k2p"
	}
}

// gated says whether a refusal depends on a KubeRay feature gate being off ("RayJobDeletionPolicy
// feature gate must be enabled to use DeletionStrategy"): KubeRay words every such check so. The
// default gates differ by release (v1.5.0 turns RayJobDeletionPolicy off, v1.6.0 on; v1.7.0
// turns RayServiceIncrementalUpgrade on) and an operator's --feature-gates may set any, so only
// an operator that validates alike, with its own defaults, is judged.
func gated(err error) bool { return strings.Contains(err.Error(), "feature gate") }

// ownerJob is the RayJob document that carries c's cluster spec.
func (ix *index) ownerJob(c *clusterView) *rayv1.RayJob {
	for i := range ix.s.Jobs {
		j := &ix.s.Jobs[i]
		if j.Namespace == c.owner.Namespace && j.Name == c.owner.Name {
			return j
		}
	}
	return nil
}

// specRefused reports the operator's refusal of a document read by doctor -f (it runs only
// there: on a live cluster the operator has already spoken, and spec-invalid quotes it). When
// the cluster it would be applied to runs one operator of a known version, the finding says
// what that version does: one older than v1.5.0 accepts what this rule reports, and an upgrade
// of it stops reconciling the cluster; that is still an error, since every supported newer
// operator refuses it.
func specRefused(ix *index, c *clusterView) []Finding {
	if !ix.opts.SpecOnly {
		return nil // FilesOnly
	}
	op, known := ix.targetOperator()
	alike, v15 := false, false
	if known {
		_, alike = ix.operatorIn(validatesAlike)
		_, v15 = ix.operatorIn(v15Line)
	}
	r := validateAsOperator(ix, c)
	if r == nil && v15 {
		r = v15GatedRefusal(ix, c)
	}
	if r == nil {
		r = v17GatedRefusal(ix, c)
	}
	if r == nil {
		return nil
	}
	as := specRefusedAs
	if r.as != "" {
		as = r.as
	} else if gated(r.err) && !alike {
		return nil // another release's defaults, or unknown: the gate may well be on
	}
	gates := ""
	switch {
	case gated(r.err) && r.as == v17Release:
		gates = ", with the operator's feature gates as its --feature-gates set them (" + v17Release + " turns this one off by default)"
	case gated(r.err):
		gates = ", with its default feature gates, which the operator's --feature-gates can change"
	}
	msg := fmt.Sprintf("the KubeRay operator refuses %s and creates nothing of it: %q (KubeRay %s's own validation%s; the Warning Event %s)", refName(r.obj), r.event, as, gates, r.reason)
	remedy := "fix the spec as the message says; the operator reconciles it once it changes"
	if r.fix != "" {
		remedy = r.fix
	}
	ev := map[string]string{"reason": r.reason, "event": r.event, "validatedAs": as}
	if known {
		ev["operator"] = op
	}
	if known && r.as == "" { // a gated refusal in v1.5.0's words is the operator's own
		v := version.MustParseSemantic(op)
		switch {
		case v.LessThan(firstValidating) && r.obj.Kind == "RayJob":
			// v1.1.1's rayjob_controller.go has a validateRayJobSpec of its own: suspend,
			// clusterSelector, runtimeEnvYAML, activeDeadlineSeconds; it logs, records no Event.
			msg += fmt.Sprintf("; the operator here, %s, validates a RayJob only in part (suspend, clusterSelector, runtimeEnvYAML, activeDeadlineSeconds; it logs a refusal and records no Event), so it may start this one, and an upgrade of the operator to v%s or later refuses it", op, validatesAlike.From)
			remedy = "fix the spec before the operator is upgraded to v" + validatesAlike.From.String() + " or later"
		case v.LessThan(firstValidating):
			msg += fmt.Sprintf("; the operator here, %s, does not run this validation and would start it, but an upgrade of the operator to v%s or later stops reconciling it", op, validatesAlike.From)
			remedy = "fix the spec before the operator is upgraded to v" + validatesAlike.From.String() + " or later"
		case v.LessThan(validatesAlike.From):
			msg += fmt.Sprintf("; the operator here, %s, runs an older validation, without some of these checks (authOptions, minReplicas against maxReplicas) and with other words for some: it may start this one, and an upgrade of the operator to v%s or later refuses it", op, validatesAlike.From)
			remedy = "fix the spec before the operator is upgraded to v" + validatesAlike.From.String() + " or later"
		case !alike:
			msg += fmt.Sprintf("; the operator here is %s, whose validation has these checks and more, and may word them differently", op)
		}
	}
	return []Finding{c.finding(RuleSpecRefused, r.obj, msg, remedy, ev)}
}

// FilesOnly says whether rule runs only on documents read by doctor -f (Options.SpecOnly).
func FilesOnly(rule string) bool { return rule == RuleSpecRefused }

// refName names an object for messages: "RayService ml/svc".
func refName(r state.Ref) string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// targetOperator is the version of the one KubeRay operator the snapshot holds, when there is
// exactly one and its image tells its release; a release newer than the newest read is judged as
// that one.
func (ix *index) targetOperator() (string, bool) {
	if len(ix.operators) != 1 {
		return "", false
	}
	if _, err := version.ParseSemantic(ix.operators[0].Version); err != nil {
		return "", false
	}
	if ix.operators[0].Newer() {
		// Judged as the newest release read (operator-newer says so).
		return "v" + ray.NewestKnownRelease.String(), true
	}
	return ix.operators[0].Version, true
}

// releaseSpan is the releases of KubeRay from From up to, not including, Fixed: those whose source
// was read to behave as a rule says.
type releaseSpan struct{ From, Fixed *version.Version }

// operatorIn is the version of the one KubeRay operator the snapshot holds when its release is in
// span.
func (ix *index) operatorIn(span releaseSpan) (string, bool) {
	op, ok := ix.targetOperator()
	if !ok {
		return "", false
	}
	v := version.MustParseSemantic(op)
	return op, v.AtLeast(span.From) && v.LessThan(span.Fixed)
}
