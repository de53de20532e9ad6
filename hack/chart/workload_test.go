package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// rayCluster is a small RayCluster (one head, one worker) for the real KubeRay operator of the
// sandbox to run on kwok's node.
const rayCluster = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rbac
spec:
  rayVersion: "2.9.0"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
            resources:
              requests: {cpu: 100m, memory: 512Mi}
              limits: {cpu: "1", memory: 512Mi}
  workerGroupSpecs:
    - groupName: small
      replicas: 1
      minReplicas: 1
      maxReplicas: 1
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray:2.9.0
              resources:
                requests: {cpu: 100m, memory: 512Mi}
                limits: {cpu: "1", memory: 512Mi}
`

var rayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}

func createRayCluster(ctx context.Context, t *testing.T, dyn dynamic.Interface, ns string) {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(rayCluster), &u.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(rayClusters).Namespace(ns).Create(ctx, &u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// head is the one head of RayCluster rbac in ns, once there is exactly one that is Running and
// Ready or evicted (a head the operator is still creating is waited for).
func head(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) corev1.Pod {
	t.Helper()
	var h corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=rbac,ray.io/node-type=head"})
		if err != nil || len(l.Items) != 1 || l.Items[0].DeletionTimestamp != nil {
			return false, nil
		}
		h = l.Items[0]
		return runningReady(&h) || evicted(&h), nil
	})
	if err != nil {
		t.Fatalf("no Running head of RayCluster %s/rbac within 90s", ns)
	}
	return h
}

func runningReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func evicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"
}

// evictedHead returns the head of RayCluster rbac in ns evicted: it evicts a Running head, as the
// kubelet would under disk pressure, and leaves one already evicted as it is. No kubelet runs on
// kwok's node, so the test plays the eviction: it writes the pod's status and Event in the shape
// the kubelet writes them, as test/play.KubeletEvict does for the e2e tests (copied here: this
// module's client-go is not the root module's). KubeRay v1.1.1 leaves an evicted head alone
// (kuberay #2125): only the watchdog's delete makes the operator create a new one.
func evictedHead(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) corev1.Pod {
	t.Helper()
	pod := head(ctx, t, cs, ns)
	if evicted(&pod) {
		return pod
	}
	now := metav1.Now()
	msg := "The node was low on resource: ephemeral-storage. Threshold quantity: 300Mi, available: 124024Ki. "
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, "Evicted", msg
	conds := map[corev1.PodConditionType]corev1.PodCondition{
		corev1.DisruptionTarget:          {Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", Message: msg, LastTransitionTime: now},
		corev1.PodReadyToStartContainers: {Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse, LastTransitionTime: now},
		corev1.PodReady:                  {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now},
		corev1.ContainersReady:           {Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now},
	}
	for i, c := range pod.Status.Conditions {
		if nc, ok := conds[c.Type]; ok {
			pod.Status.Conditions[i] = nc
			delete(conds, c.Type)
		}
	}
	for _, typ := range []corev1.PodConditionType{corev1.DisruptionTarget, corev1.PodReadyToStartContainers, corev1.PodReady, corev1.ContainersReady} {
		if c, ok := conds[typ]; ok {
			pod.Status.Conditions = append(pod.Status.Conditions, c)
		}
	}
	for i := range pod.Status.ContainerStatuses {
		c := &pod.Status.ContainerStatuses[i]
		started := now
		if c.State.Running != nil {
			started = c.State.Running.StartedAt
		}
		no := false
		c.Ready, c.Started = false, &no
		c.RestartCount++
		c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message: "The container could not be located when the pod was terminated", StartedAt: started, FinishedAt: now}}
	}
	updated, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, &pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("playing the kubelet's eviction of %s/%s: %v", ns, pod.Name, err)
	}
	if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod.Name,
			UID: pod.UID, ResourceVersion: updated.ResourceVersion},
		Reason: "Evicted", Message: msg, Type: corev1.EventTypeWarning, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return *updated
}

// healEvents counts the RayHeadHealed Events the watchdog recorded about the delete of pod: one
// on the pod, one on its RayCluster.
func healEvents(ctx context.Context, cs kubernetes.Interface, pod corev1.Pod) (onPod, onCluster int, err error) {
	l, err := cs.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=RayHeadHealed"})
	if err != nil {
		return 0, 0, err
	}
	for _, e := range l.Items {
		switch {
		case e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.UID == pod.UID:
			onPod++
		case e.InvolvedObject.Kind == "RayCluster" && strings.Contains(e.Message, "(uid "+string(pod.UID)+")"):
			onCluster++
		}
	}
	return onPod, onCluster, nil
}
