package load

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

func snapshotClients() (*kube.Clients, *kfake.Clientset, *rayfake.Clientset) {
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-head", Namespace: "ml",
		Labels: map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "a", ray.LabelNodeType: "head"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ml"}}
	elsewhere := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b-head", Namespace: "other",
		Labels: map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "b"}}}
	serve := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-serve-svc", Namespace: "ml", Labels: map[string]string{ray.LabelServe: "svc-serve"}}}
	headSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a-head-svc", Namespace: "ml"}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "kuberay-operator", Namespace: "ray-system"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "quay.io/kuberay/operator:v1.1.1"}}}}}}
	// The EndpointSlice controller copies a Service's labels onto its slices.
	serveSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "svc-serve-svc-abcde", Namespace: "ml",
		Labels: map[string]string{ray.LabelServe: "svc-serve", discoveryv1.LabelServiceName: "svc-serve-svc"}}}
	headSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "a-head-svc-fghij", Namespace: "ml",
		Labels: map[string]string{discoveryv1.LabelServiceName: "a-head-svc"}}}
	// KubeRay's Redis cleanup Job (its template is the head's, Redis password included) and a Job
	// of someone else's.
	cleanup := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "a-redis-cleanup", Namespace: "ml",
		Labels: map[string]string{ray.LabelCluster: "a", ray.LabelNodeType: ray.NodeTypeRedisCleanup}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head",
			Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "job-secret-pw"}}}}}}}}
	otherJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "ml"}}
	kc := kfake.NewClientset(head, other, elsewhere, serve, headSvc, node, op, serveSlice, headSlice, cleanup, otherJob)
	rc := rayfake.NewSimpleClientset(
		&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ml", Labels: map[string]string{"team": "x"}}},
		&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "a2", Namespace: "ml"}},
		&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ml"}},
		&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ml"}},
	)
	return &kube.Clients{Kube: kc, Ray: rc}, kc, rc
}

func forbid(resource string) k8stesting.ReactionFunc {
	return func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", nil)
	}
}

func TestFromAPIOneListPerKind(t *testing.T) {
	c, kc, rc := snapshotClients()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml", Selector: "team=x", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Now.Equal(now) || len(s.Clusters) != 1 || s.Clusters[0].Name != "a" {
		t.Errorf("clusters = %v (the -l selector applies to RayClusters)", s.Clusters)
	}
	if len(s.Pods) != 1 || s.Pods[0].Name != "a-head" {
		t.Errorf("pods = %v, want only the Ray pod in ml", s.Pods)
	}
	if len(s.Serve) != 1 || s.Serve[0].Name != "svc-serve-svc" || len(s.Nodes) != 1 || len(s.Deployments) != 1 ||
		len(s.Services) != 1 || len(s.Jobs) != 1 || len(s.Blind) != 0 ||
		len(s.ServeEndpoints) != 1 || s.ServeEndpoints[0].Name != "svc-serve-svc-abcde" ||
		len(s.CleanupJobs) != 1 || s.CleanupJobs[0].Name != "a-redis-cleanup" {
		t.Errorf("snapshot = %+v", s)
	}
	lists := map[string]int{}
	for _, a := range append(kc.Actions(), rc.Actions()...) {
		if a.GetVerb() != "list" {
			t.Errorf("unexpected %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		lists[a.GetResource().Resource]++
		// Every LIST is paged; a page size of 0 would ask for everything in one response.
		if l, ok := a.(k8stesting.ListActionImpl); ok {
			if got, want := l.ListOptions.Limit, int64(kube.PageSize); got != want {
				t.Errorf("LIST %s asked for %d a page, want %d", a.GetResource().Resource, got, want)
			}
		}
	}
	if len(s.CleanupJobs) == 1 && len(s.CleanupJobs[0].Spec.Template.Spec.Containers) != 0 {
		t.Errorf("the cleanup Job's pod template was kept")
	}
	if _, ok := s.Secrets["job-secret-pw"]; !ok {
		t.Errorf("the cleanup Job's Redis password is not known to the redactor")
	}
	for _, r := range []string{"rayclusters", "rayservices", "rayjobs", "pods", "nodes", "services", "endpointslices", "jobs", "deployments", "poddisruptionbudgets", "networkpolicies"} {
		if lists[r] != 1 {
			t.Errorf("%d LISTs of %s, want 1", lists[r], r)
		}
	}
	// Events: those about RayClusters, and the operator's Warnings about RayJobs and RayServices.
	if lists["events"] != 2 {
		t.Errorf("%d LISTs of events, want 2", lists["events"])
	}
	if len(lists) != 12 {
		t.Errorf("lists = %v", lists)
	}
}

func TestFromAPIBlind(t *testing.T) {
	c, kc, rc := snapshotClients()
	kc.PrependReactor("list", "nodes", forbid("nodes"))
	kc.PrependReactor("list", "services", forbid("services"))
	kc.PrependReactor("list", "deployments", forbid("deployments"))
	kc.PrependReactor("list", "endpointslices", forbid("endpointslices"))
	kc.PrependReactor("list", "jobs", forbid("jobs"))
	kc.PrependReactor("list", "poddisruptionbudgets", forbid("poddisruptionbudgets"))
	rc.PrependReactor("list", "rayjobs", forbid("rayjobs"))
	rc.PrependReactor("list", "rayservices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "ray.io", Resource: "rayservices"}, "")
	})
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range s.Blind {
		got = append(got, g.Resource)
		if g.Reason == "" {
			t.Errorf("gap %s has no reason", g.Resource)
		}
	}
	if strings.Join(got, ",") != "rayservices,rayjobs,nodes,services,endpointslices,jobs,poddisruptionbudgets,deployments" {
		t.Errorf("blind = %v", got)
	}
	if len(s.Clusters) != 2 || len(s.Pods) != 1 {
		t.Errorf("required kinds must still be read: %+v", s)
	}
	if !strings.Contains(s.Blind[2].Reason, "kubectl auth can-i list nodes") {
		t.Errorf("nodes reason = %q", s.Blind[2].Reason)
	}
}

func TestFromAPIFatal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(*kfake.Clientset, *rayfake.Clientset)
		code     int
		contains string
	}{
		{"rayclusters forbidden", func(_ *kfake.Clientset, rc *rayfake.Clientset) {
			rc.PrependReactor("list", "rayclusters", forbid("rayclusters"))
		}, exit.Forbidden, `you cannot list rayclusters.ray.io in namespace "ml"`},
		{"pods forbidden", func(kc *kfake.Clientset, _ *rayfake.Clientset) {
			kc.PrependReactor("list", "pods", forbid("pods"))
		}, exit.Forbidden, `you cannot list pods in namespace "ml"`},
		{"no CRDs", func(_ *kfake.Clientset, rc *rayfake.Clientset) {
			rc.PrependReactor("list", "rayclusters", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, "")
			})
		}, exit.API, "KubeRay is not installed in this cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, kc, rc := snapshotClients()
			tc.setup(kc, rc)
			_, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml"})
			if exit.CodeOf(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("err = %v (code %d), want code %d containing %q", err, exit.CodeOf(err), tc.code, tc.contains)
			}
		})
	}
}

// A user who cannot list deployments cluster-wide still finds an operator in the namespace checked.
func TestFromAPIOperatorInNamespace(t *testing.T) {
	c, kc, _ := snapshotClients()
	op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "kuberay-operator", Namespace: "ml"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "kuberay/operator:v1.5.0"}}}}}}
	if err := kc.Tracker().Add(op); err != nil {
		t.Fatal(err)
	}
	kc.PrependReactor("list", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "" {
			return forbid("deployments")(a)
		}
		return false, nil, nil
	})
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Blind) != 0 || len(s.Deployments) != 1 || s.Deployments[0].Namespace != "ml" {
		t.Errorf("blind = %v, deployments = %v", s.Blind, s.Deployments)
	}
}

// The loader trims pods, RayClusters and nodes as their pages arrive and keeps the secret values
// of what it drops, so the redactor still knows them.
func TestFromAPITrimsAndKeepsSecrets(t *testing.T) {
	env := []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "podPassw0rd"}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a-head", Namespace: "ml", UID: "u1", ResourceVersion: "7",
			Annotations: map[string]string{"big": "x"},
			Labels:      map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "a", ray.LabelNodeType: "head"}},
		Spec:   corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "ray-head", Env: env}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"rayproject/ray:2.9.0"}}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}}}}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ml"},
		Spec: rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{
			RayStartParams: map[string]string{"num-cpus": "0"},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head",
				Env: []corev1.EnvVar{{Name: "API_TOKEN", Value: "clusterT0ken"}}}}}}}}}
	c := &kube.Clients{Kube: kfake.NewClientset(pod, node), Ray: rayfake.NewSimpleClientset(rc)}
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Pods[0]
	if !containersTrimmed(p) || len(p.Annotations) != 0 || p.UID != "u1" || p.ResourceVersion != "7" ||
		p.Spec.NodeName != "node-1" || p.Status.Reason != "Evicted" || p.Labels[ray.LabelCluster] != "a" {
		t.Errorf("pod not trimmed as TrimPod says: %+v", p)
	}
	if n := s.Nodes[0]; len(n.Status.Images) != 0 || len(n.Status.Conditions) != 1 {
		t.Errorf("node not trimmed as TrimNode says: %+v", n)
	}
	if h := s.Clusters[0].Spec.HeadGroupSpec; len(h.Template.Spec.Containers) != 1 || len(h.Template.Spec.Containers[0].Env) != 0 || h.RayStartParams["num-cpus"] != "0" {
		t.Errorf("cluster not trimmed as TrimCluster says: %+v", h)
	}
	for _, secret := range []string{"podPassw0rd", "clusterT0ken"} {
		if _, ok := s.Secrets[secret]; !ok {
			t.Errorf("Secrets = %v, want %q from the dropped spec", s.Secrets, secret)
		}
	}
}

// Events are read with one LIST selected by field (involvedObject.kind=RayCluster); only head
// lifecycle Events are kept, trimmed; a refusal makes events blind, not an error.
func TestFromAPIEvents(t *testing.T) {
	c, kc, _ := snapshotClients()
	for i, ev := range []corev1.Event{
		{Reason: "DeletedHeadPod", Message: "Deleted head Pod ml/a-head-1; Pod status: Failed"},
		{Reason: "CreatedWorkerPod", Message: "Created worker Pod ml/a-w"},
		{Reason: "RayClusterNotFound", Type: corev1.EventTypeWarning, Message: "RayCluster ml/gone set in the clusterSelector is not found. It must be created manually"},
		{Reason: "CreatedRayCluster", Message: "Created RayCluster ml/job-abcde"},
	} {
		ev.Name, ev.Namespace = fmt.Sprintf("a.%d", i), "ml"
		ev.InvolvedObject = corev1.ObjectReference{Kind: "RayCluster", Namespace: "ml", Name: "a"}
		if i >= 2 {
			ev.InvolvedObject = corev1.ObjectReference{Kind: "RayJob", Namespace: "ml", Name: "job"}
		}
		ev.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
		ev.Annotations = map[string]string{"x": "y"}
		if _, err := kc.CoreV1().Events("ml").Create(context.Background(), &ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kc.ClearActions()
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	// The RayCluster head Event and the operator's Warning about the RayJob, from two LISTs.
	if len(s.Events) != 2 || s.Events[0].Reason != "DeletedHeadPod" || s.Events[1].Reason != "RayClusterNotFound" ||
		s.Events[0].Annotations != nil || s.Events[0].ManagedFields != nil {
		t.Fatalf("events = %+v", s.Events)
	}
	selectors := map[string]int{}
	for _, a := range kc.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "events" {
			selectors[l.GetListRestrictions().Fields.String()]++
		}
	}
	if want := map[string]int{fields.ParseSelectorOrDie(ray.EventFieldSelector).String(): 1,
		fields.ParseSelectorOrDie(ray.WarningFieldSelector).String(): 1}; !reflect.DeepEqual(selectors, want) {
		t.Errorf("events listed with field selectors %v, want %v", selectors, want)
	}

	kc.PrependReactor("list", "events", forbid("events"))
	s, err = FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	if s.CanSee("events") || len(s.Events) != 0 {
		t.Fatalf("refused events: blind = %+v", s.Blind)
	}
}

// containersTrimmed: a trimmed pod keeps at most its first container's name (state.TrimPod),
// nothing of its spec.
func containersTrimmed(p corev1.Pod) bool {
	return len(p.Spec.Containers) == 0 ||
		len(p.Spec.Containers) == 1 && reflect.DeepEqual(p.Spec.Containers[0], corev1.Container{Name: p.Spec.Containers[0].Name})
}

// A Running K8sJobMode RayJob adds one LIST of pods, by the Job controller's label for its
// submitter Job; the pods of other Jobs stay on the server, and the submitter's env is trimmed
// and known to the redactor.
func TestFromAPISubmitterPods(t *testing.T) {
	sub := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etl-x7k2p", Namespace: "ml",
		Labels: map[string]string{"batch.kubernetes.io/job-name": "etl"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-job-submitter", Env: []corev1.EnvVar{{Name: "TOKEN", Value: "submitter-secret"}}}}}}
	backup := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "backup-abcde", Namespace: "ml",
		Labels: map[string]string{"batch.kubernetes.io/job-name": "backup"}}}
	kc := kfake.NewClientset(sub, backup)
	rc := rayfake.NewSimpleClientset(&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "etl", Namespace: "ml"},
		Status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}})
	c := &kube.Clients{Kube: kc, Ray: rc}
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.SubmitterPods) != 1 || s.SubmitterPods[0].Name != "etl-x7k2p" || len(s.Pods) != 0 {
		t.Errorf("submitter pods %v, Ray pods %v", s.SubmitterPods, s.Pods)
	}
	if _, ok := s.Secrets["submitter-secret"]; !ok || len(s.SubmitterPods) == 1 && len(s.SubmitterPods[0].Spec.Containers[0].Env) != 0 {
		t.Errorf("the submitter's env was kept, or its secret is unknown to the redactor")
	}
	var sels []string
	for _, a := range kc.Actions() {
		if l, ok := a.(k8stesting.ListActionImpl); ok && a.GetResource().Resource == "pods" {
			sels = append(sels, l.ListOptions.LabelSelector)
		}
	}
	if len(sels) != 2 || !slices.Contains(sels, "batch.kubernetes.io/job-name in (etl)") {
		t.Errorf("pod LISTs with selectors %q, want the Ray pods' and the submitters'", sels)
	}
}

// Full sees each object whole before the snapshot trims it: the bundle renders its files there.
func TestFromAPIFull(t *testing.T) {
	c, _, _ := snapshotClients()
	var mu sync.Mutex
	seen := map[string]int{}
	count := func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		seen[kind]++
	}
	full := &Full{
		Cluster: func(rc *rayv1.RayCluster, raw []byte) {
			if bytes.Contains(raw, []byte(`"name":"`+rc.Name+`"`)) { // its own JSON
				count("cluster")
			}
		},
		RayService: func(rs *rayv1.RayService, raw []byte) { count("rayservice") },
		RayJob:     func(j *rayv1.RayJob, raw []byte) { count("rayjob") },
		Pod:        func(*corev1.Pod) { count("pod") },
		Node:       func(*corev1.Node) { count("node") },
		Job: func(o *batchv1.Job) {
			if len(o.Spec.Template.Spec.Containers) == 1 { // whole: not trimmed yet
				count("job")
			}
		},
	}
	s, err := FromAPI(context.Background(), c, Query{Reads: diagnose.Reads, Namespace: "ml", Full: full})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CleanupJobs) != 1 || len(s.CleanupJobs[0].Spec.Template.Spec.Containers) != 0 {
		t.Errorf("the snapshot's cleanup Job was not trimmed: %+v", s.CleanupJobs)
	}
	for _, kind := range []string{"cluster", "rayservice", "rayjob", "pod", "node", "job"} {
		if seen[kind] == 0 {
			t.Errorf("Full saw no %s whole (%v)", kind, seen)
		}
	}
}

// heal --watch's caches hold trimmed objects, as doctor's loader does, and its snapshots still
// carry the secrets of what was trimmed.
func TestHealInformersTrimAndKeepSecrets(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a-head", Namespace: "ml", UID: "u1", ResourceVersion: "7",
			Annotations: map[string]string{"big": "x"},
			Labels:      map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "a", ray.LabelNodeType: "head"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "ray-head",
			Env: []corev1.EnvVar{{Name: "REDIS_PASSWORD", Value: "podPassw0rd"}}}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"rayproject/ray:2.9.0"}}}}}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ml"},
		Spec: rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ray-head", Env: []corev1.EnvVar{{Name: "API_TOKEN", Value: "clusterT0ken"}}}}}}}}}
	c := &kube.Clients{Kube: kfake.NewClientset(pod, node), Ray: rayfake.NewSimpleClientset(rc)}
	// As heal --watch does: client-go's logs are routed before any informer runs.
	kube.RouteClientLogs(func(string, string, ...any) {})
	h, err := NewInformers(c, "ml", true, diagnose.KeepEvent, func(types.NamespacedName) {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s, ok := h.Snapshot(types.NamespacedName{Namespace: "ml", Name: "a"}, time.Now())
	if !ok || len(s.Pods) != 1 || len(s.Nodes) != 1 {
		t.Fatalf("snapshot = %+v", s)
	}
	if p := s.Pods[0]; !containersTrimmed(p) || len(p.Annotations) != 0 || p.UID != "u1" || p.Spec.NodeName != "node-1" {
		t.Errorf("cached pod not trimmed: %+v", p)
	}
	if cs := s.Clusters[0].Spec.HeadGroupSpec.Template.Spec.Containers; len(s.Nodes[0].Status.Images) != 0 || len(cs) != 1 || len(cs[0].Env) != 0 {
		t.Errorf("cached node or cluster not trimmed: %+v %+v", s.Nodes[0], s.Clusters[0])
	}
	for _, secret := range []string{"podPassw0rd", "clusterT0ken"} {
		if _, ok := s.Secrets[secret]; !ok {
			t.Errorf("snapshot secrets = %v, want %q", s.Secrets, secret)
		}
	}
}
