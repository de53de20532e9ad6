package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Source is the API calls a bundle makes beyond doctor's snapshot; *kube.Clients is one.
type Source interface {
	ListServicesMatching(ctx context.Context, namespace, selector string) ([]corev1.Service, error)
	ListEndpointSlicesMatching(ctx context.Context, namespace, selector string) ([]discoveryv1.EndpointSlice, error)
	ListJobsMatching(ctx context.Context, namespace, selector string) ([]batchv1.Job, error)
	ListEventsKept(ctx context.Context, namespace string, keep func(*corev1.Event) bool) ([]corev1.Event, error)
	ListPodsMatching(ctx context.Context, namespace, selector string) ([]corev1.Pod, error)
	PodLog(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) ([]byte, error)
	TarDir(ctx context.Context, namespace, pod, container, dir string, limit int64) ([]byte, bool, error)
	ReadAPIVersions() (kube.APIVersions, error)
}

// Collected is what the reads beyond the snapshot brought back.
type Collected struct {
	Services        []corev1.Service
	EndpointSlices  []discoveryv1.EndpointSlice
	Jobs            []batchv1.Job
	PDBs            []policyv1.PodDisruptionBudget
	NetworkPolicies []networkingv1.NetworkPolicy
	Events          []corev1.Event
	OperatorPods    []corev1.Pod
	Logs            map[artifact.LogRequest][]byte
	// OperatorLogs: each operator container's log, cut to the lines that name a picked object.
	OperatorLogs map[artifact.LogRequest][]byte
	// RayLogs: each head's Ray log files.
	RayLogs  map[RayLogRequest][]RayLogFile
	Versions kube.APIVersions
	// Gaps are the reads that failed: what, and the explained error.
	Gaps []artifact.

		// CollectOptions bound the reads.
		Gap
}

type CollectOptions struct {
	Limits artifact.LogLimits
	// RayLogBytes caps each head's read of its Ray log directory (the tar stream); 0: no cap.
	RayLogBytes int64
	// Parallel is how many reads run at once.
	Parallel int
	// Progress, when set, is told each finished read: how many of how many.
	Progress func(done, total int)
	// Stream, when set, keeps each container log, operator log and Ray log file as soon as it is
	// read (learned and compressed, Stream.Keep): Collected then lists them without their bytes.
	Stream *Stream
}

// Selectors of the extra LISTs: KubeRay's Services (head, headless workers) carry the cluster's
// label, and the EndpointSlice controller copies it onto their slices; the operator marks the
// Jobs it creates (submitters, Redis cleanup) as its own.
const (
	clusterLabelSelector = ray.LabelCluster
	kuberayJobSelector   = "app.kubernetes.io/created-by=kuberay-operator"
)

// Collect makes the reads p needs beyond the snapshot: per namespace (or cluster-wide with -A)
// one LIST each of Services, EndpointSlices, Jobs and Events (the PodDisruptionBudgets are the
// snapshot's, which reads them all), one LIST of
// each operator's pods, discovery's versions, and one GET per container log p asks for
// (plus the operator's containers). At most o.Parallel run at once; a read that fails is a Gap
// and never stops the others. ctx bounds the whole (--timeout): what is cut short is a Gap too.
func Collect(ctx context.Context, src Source, p Plan, o CollectOptions) Collected {
	out := Collected{Logs: map[artifact.LogRequest][]byte{}, OperatorLogs: map[artifact.LogRequest][]byte{}, RayLogs: map[RayLogRequest][]RayLogFile{}}
	w := newWorkers(ctx, o)
	namespaces := p.Namespaces
	if p.AllNamespaces {
		namespaces = []string{""}
	}
	var services []corev1.Service
	var slices []discoveryv1.EndpointSlice
	var jobs []batchv1.Job
	for _, ns := range namespaces {
		w.run(fmt.Sprintf("list services%s", in(ns)), func(ctx context.Context) error {
			l, err := src.ListServicesMatching(ctx, ns, clusterLabelSelector)
			w.locked(func() { services = append(services, l...) })
			return err
		})
		w.run(fmt.Sprintf("list endpointslices%s", in(ns)), func(ctx context.Context) error {
			l, err := src.ListEndpointSlicesMatching(ctx, ns, clusterLabelSelector)
			w.locked(func() { slices = append(slices, l...) })
			return err
		})
		w.run(fmt.Sprintf("list jobs%s", in(ns)), func(ctx context.Context) error {
			l, err := src.ListJobsMatching(ctx, ns, kuberayJobSelector)
			w.locked(func() { jobs = append(jobs, l...) })
			return err
		})
	}
	var opPods []corev1.Pod
	for _, d := range p.Operators {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || d.Spec.Selector == nil {
			w.gap("list the operator's pods in "+d.Namespace, fmt.Sprintf("the Deployment %s/%s has no usable selector", d.Namespace, d.Name))
			continue
		}
		w.run("list the operator's pods"+in(d.Namespace), func(ctx context.Context) error {
			l, err := src.ListPodsMatching(ctx, d.Namespace, sel.String())
			w.locked(func() { opPods = append(opPods, l...) })
			return err
		})
	}
	w.run("read versions (discovery)", func(context.Context) error {
		v, err := src.ReadAPIVersions()
		w.locked(func() { out.Versions = v })
		return err
	})
	w.wait()

	out.Services = keepServices(p, append(services, p.known.services...))
	out.EndpointSlices = keepSlices(out.Services, append(slices, p.known.slices...))
	out.Jobs = keepJobs(p, append(jobs, p.known.jobs...))
	out.PDBs = keepPDBs(p, p.known.pdbs)
	out.NetworkPolicies = keepNetworkPolicies(p, p.known.policies)
	out.OperatorPods = opPods
	about := eventSubjects(p, out)
	var events []corev1.Event
	for _, ns := range namespaces {
		w.run("list events"+in(ns), func(ctx context.Context) error {
			l, err := src.ListEventsKept(ctx, ns, about)
			w.locked(func() { events = append(events, l...) })
			return err
		})
	}
	for _, r := range p.Logs {
		w.run("read the log of "+r.Describe(), func(ctx context.Context) error {
			b, err := artifact.LogBody(src.PodLog(ctx, r.Namespace, r.Pod, o.Limits.Options(r.Container, r.Previous)))
			if err == nil {
				b = o.kept(r.Path(), b)
				w.locked(func() { out.Logs[r] = b })
			}
			return err
		})
	}
	for _, r := range p.RayLogs {
		what := "read Ray's log files of " + r.Namespace + "/" + r.Pod + " (tar of " + RayLogsDir + " in container " + r.Container + ")"
		w.run(what, func(ctx context.Context) error {
			stream, truncated, err := src.TarDir(ctx, r.Namespace, r.Pod, r.Container, RayLogsDir, o.RayLogBytes)
			if err != nil {
				return err
			}
			files, err := UnpackRayLogs(stream, truncated, o.Limits.LimitBytes)
			for i := range files {
				files[i].Data = o.kept(r.Dir()+"/"+files[i].Name, files[i].Data)
			}
			w.locked(func() { out.RayLogs[r] = files })
			if truncated {
				w.gap(what, fmt.Sprintf("cut at %d bytes (--ray-log-bytes): the files after the cut were not read", o.RayLogBytes))
			}
			return err
		})
	}
	names := p.Names()
	for i := range opPods {
		if !p.OperatorLogs {
			break
		}
		pod := &opPods[i]
		for _, c := range pod.Spec.Containers {
			r := artifact.LogRequest{Namespace: pod.Namespace, Pod: pod.Name, Container: c.Name}
			w.run("read the operator's log "+r.Describe(), func(ctx context.Context) error {
				b, err := src.PodLog(ctx, r.Namespace, r.Pod, o.Limits.Options(r.Container, false))
				if err == nil {
					b = o.kept(operatorLogPath(r), LinesNaming(b, names))
					w.locked(func() { out.OperatorLogs[r] = b })
				}
				return artifact.LogError(err)
			})
		}
	}
	w.wait()
	sort.Slice(events, func(i, j int) bool { return artifact.EventTime(&events[i]).Before(artifact.EventTime(&events[j])) })
	out.Events = events
	out.Gaps = w.gaps
	sort.Slice(out.Gaps, func(i, j int) bool { return out.Gaps[i].What < out.Gaps[j].What })
	return out
}

// kept hands data to the stream, when there is one, and returns what Collected keeps of it:
// nothing then, data otherwise.
func (o CollectOptions) kept(path string, data []byte) []byte {
	if o.Stream == nil {
		return data
	}
	o.Stream.Keep(path, data)
	return nil
}

func in(ns string) string {
	if ns == "" {
		return " (all namespaces)"
	}
	return " in " + ns
}

// LinesNaming keeps the lines of log that name one of names (the operator logs every cluster
// it reconciles; a bundle keeps what concerns its own).
func LinesNaming(log []byte, names []string) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		for _, n := range names {
			if bytes.Contains(line, []byte(n)) {
				out.Write(line)
				break
			}
		}
	}
	return out.Bytes()
}

// workers runs reads with a limit, and keeps a Gap for each that fails.
type workers struct {
	ctx      context.Context
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	gaps     []artifact.Gap
	done     int
	total    int
	progress func(done, total int)
}

func newWorkers(ctx context.Context, o CollectOptions) *workers {
	n := o.Parallel
	if n < 1 {
		n = 1
	}
	return &workers{ctx: ctx, sem: make(chan struct{}, n), progress: o.Progress}
}

func (w *workers) locked(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
}

func (w *workers) gap(what, reason string) {
	w.locked(func() { w.gaps = append(w.gaps, artifact.Gap{What: what, Reason: reason}) })
}

func (w *workers) run(what string, read func(context.Context) error) {
	w.locked(func() { w.total++ })
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var err error
		select {
		case w.sem <- struct{}{}:
			err = read(w.ctx)
			<-w.sem
		case <-w.ctx.Done():
			err = w.ctx.Err()
		}
		if err != nil {
			reason := err.Error()
			if errors.Is(err, context.DeadlineExceeded) || w.ctx.Err() != nil {
				reason = "not read before the bundle's --timeout"
			}
			w.gap(what, reason)
		}
		w.locked(func() {
			w.done++
			if w.progress != nil {
				w.progress(w.done, w.total)
			}
		})
	}()
}

func (w *workers) wait() { w.wg.Wait() }
