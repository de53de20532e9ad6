package play

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// KubeletPressureStagesYAML plays, for the pods of namespace ns only, what a real kubelet does
// once our ephemeral container runs and fills the node's disk or memory:
//   - kubectl-ray-start: any ephemeral container without a status is started (a kwok node
//     runs nothing; without this stage the container would never show as running);
//   - kubectl-ray-evict-disk, kubectl-ray-evict-memory: delay after a
//     kubectl-ray-disk-pressure-* (memory-pressure-*) container runs, the pod is evicted for
//     ephemeral-storage (memory) the way the real node's kubelet wrote it (phase Failed, reason
//     Evicted, the "low on resource" message, a DisruptionTarget condition,
//     PodReadyToStartContainers False, every container terminated, the running ephemeral
//     container back to waiting ContainerCreating with lastState ContainerStatusUnknown),
//     matching KubeletEvict. A Stage writes no Event: the kubelet's Evicted Event is missing.
//
// The selectors name the namespace, so pods of other namespaces (tests running beside) are
// untouched.
func KubeletPressureStagesYAML(ns string, delay time.Duration) string {
	return stageHead("kubectl-ray-start-"+ns, ns) + `    - key: '((.spec.ephemeralContainers // []) | length) > ((.status.ephemeralContainerStatuses // []) | length)'
      operator: 'In'
      values: ['true']
  next:
    statusTemplate: |
      {{ $now := Now }}
      ephemeralContainerStatuses:
      {{ range .spec.ephemeralContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
` +
		"---\n" + evictStageYAML(ns, delay, "disk", EvictionMessage("ephemeral-storage")) +
		"---\n" + evictStageYAML(ns, delay, "memory", EvictionMessage("memory"))
}

// EvictionMessage is the first sentence the kubelet's eviction manager writes on a pod it evicts
// for resource: the threshold as configured, the available amount in Ki (the figures are the
// real node's thresholds, not measured here).
func EvictionMessage(resource string) string {
	if resource == "memory" {
		return "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. "
	}
	return "The node was low on resource: " + resource + ". Threshold quantity: 300Mi, available: 124024Ki. "
}

// stageHead is the start of a Stage named name over the Running, not deleted pods of namespace
// ns; the caller appends its own match expressions and what the Stage does.
func stageHead(name, ns string) string {
	return fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: %s
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.namespace'
      operator: 'In'
      values: ['%s']
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
`, name, ns)
}

// evictStageYAML is the Stage that evicts a pod delay after our kind-pressure container runs.
func evictStageYAML(ns string, delay time.Duration, kind, message string) string {
	return stageHead("kubectl-ray-evict-"+kind+"-"+ns, ns) + fmt.Sprintf(`    - key: '.status.ephemeralContainerStatuses.[] | select(.name | startswith("kubectl-ray-%[3]s-pressure-")) | .state | has("running")'
      operator: 'In'
      values: ['true']
  delay:
    durationMilliseconds: %[2]d
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $msg := %[4]q }}
      phase: Failed
      reason: Evicted
      message: {{ $msg | Quote }}
      conditions:
      - type: DisruptionTarget
        status: "True"
        reason: TerminationByKubelet
        message: {{ $msg | Quote }}
        lastTransitionTime: {{ $now | Quote }}
      - type: PodReadyToStartContainers
        status: "False"
        lastTransitionTime: {{ $now | Quote }}
`+failedContainersYAML+`            exitCode: 137
            reason: ContainerStatusUnknown
            message: The container could not be located when the pod was terminated
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
      {{ end }}
      ephemeralContainerStatuses:
      {{ range .spec.ephemeralContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 1
        state:
          waiting:
            reason: ContainerCreating
        lastState:
          terminated:
            exitCode: 137
            reason: ContainerStatusUnknown
            message: "The container could not be located when the pod was deleted.  The container used to be Running"
      {{ end }}
`, ns, delay.Milliseconds(), kind, message)
}

// failedContainersYAML is the part of a Stage's statusTemplate that a failed pod shares: Ready and
// ContainersReady False (PodFailed) and every container terminated; the caller goes on with the
// terminated state's exitCode and reason.
const failedContainersYAML = `      - type: Ready
        status: "False"
        reason: PodFailed
        lastTransitionTime: {{ $now | Quote }}
      - type: ContainersReady
        status: "False"
        reason: PodFailed
        lastTransitionTime: {{ $now | Quote }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: 0
        state:
          terminated:
`

var stageGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}

// KubeletPressureStages creates the Stages of KubeletPressureStagesYAML for namespace ns. It
// returns a function that deletes them (the Stages are cluster-scoped: they outlive a namespace).
func KubeletPressureStages(ctx context.Context, admin *rest.Config, ns string, delay time.Duration) (remove func(context.Context) error, err error) {
	return createStages(ctx, admin, KubeletPressureStagesYAML(ns, delay))
}

// createStages creates the kwok Stages of yaml and returns a function that deletes them.
func createStages(ctx context.Context, admin *rest.Config, yaml string) (remove func(context.Context) error, err error) {
	ap, err := sandbox.NewApplier(admin)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	created, err := ap.Create(ctx, []byte(yaml), "")
	remove = func(ctx context.Context) error {
		var errs []error
		for _, s := range created {
			if err := dyn.Resource(stageGVR).Delete(ctx, s.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting Stage %s: %v", s.GetName(), err))
			}
		}
		return errors.Join(errs...)
	}
	if err != nil {
		_ = remove(ctx)
		return nil, fmt.Errorf("creating the kwok Stages: %v", err)
	}
	return remove, nil
}
