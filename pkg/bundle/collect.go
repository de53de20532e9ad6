package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
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

// LogLimits caps each container log read (--tail, --limit-bytes, --since).
type LogLimits struct {
	Tail       int64 // lines from the end; < 0 for all
	LimitBytes int64 // 0 for no limit
	Since      time.Duration
}

// Options are the pod log options of one container's log under these limits.
func (l LogLimits) Options(container string, previous bool) *corev1.PodLogOptions {
	o := &corev1.PodLogOptions{Container: container, Previous: previous}
	if l.Tail >= 0 {
		o.TailLines = &l.Tail
	}
	if l.LimitBytes > 0 {
		o.LimitBytes = &l.LimitBytes
	}
	if l.Since > 0 {
		s := int64(l.Since.Seconds())
		o.SinceSeconds = &s
	}
	return o
}

// Collected is what the reads beyond the snapshot brought back.
type Collected struct {
	Services       []corev1.Service
	EndpointSlices []discoveryv1.EndpointSlice
	Jobs           []batchv1.Job
	PDBs           []policyv1.PodDisruptionBudget
	Events         []corev1.Event
	OperatorPods   []corev1.Pod
	Logs           map[LogRequest][]byte
	// OperatorLogs: each operator container's log, cut to the lines that name a picked object.
	OperatorLogs map[LogRequest][]byte
	// RayLogs: each head's Ray log files.
	RayLogs  map[RayLogRequest][]RayLogFile
	Versions kube.APIVersions
	// Gaps are the reads that failed: what, and the explained error.
	Gaps []Gap
}

// Gap is one read that failed.
type Gap struct {
	What   string `json:"what"`
	Reason string `json:"reason"`
}

// CollectOptions bound the reads.
type CollectOptions struct {
	Limits LogLimits
	// RayLogBytes caps each head's read of its Ray log directory (the tar stream); 0: no cap.
	RayLogBytes int64
	// Parallel is how many reads run at once.
	Parallel int
	// Progress, when set, is told each finished read: how many of how many.
	Progress func(done, total int)
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
	out := Collected{Logs: map[LogRequest][]byte{}, OperatorLogs: map[LogRequest][]byte{}, RayLogs: map[RayLogRequest][]RayLogFile{}}
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
		w.run("read the log of "+r.describe(), func(ctx context.Context) error {
			b, err := LogBody(src.PodLog(ctx, r.Namespace, r.Pod, o.Limits.Options(r.Container, r.Previous)))
			if err == nil {
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
			r := LogRequest{Namespace: pod.Namespace, Pod: pod.Name, Container: c.Name}
			w.run("read the operator's log "+r.describe(), func(ctx context.Context) error {
				b, err := src.PodLog(ctx, r.Namespace, r.Pod, o.Limits.Options(r.Container, false))
				if err == nil {
					w.locked(func() { out.OperatorLogs[r] = LinesNaming(b, names) })
				}
				return LogError(err)
			})
		}
	}
	w.wait()
	sort.Slice(events, func(i, j int) bool { return EventTime(&events[i]).Before(EventTime(&events[j])) })
	out.Events = events
	out.Gaps = w.gaps
	sort.Slice(out.Gaps, func(i, j int) bool { return out.Gaps[i].What < out.Gaps[j].What })
	return out
}

// LogBody is a log read's answer as it should be kept: the log, or why there is none. A kubelet
// whose container's log is gone answers 200 with one line of its own in place of the log
// ("unable to retrieve container logs for containerd://..."): it removed the dead container with
// its log, as it does when it evicts a pod for disk pressure (it reclaims the node's disk by
// removing dead containers) or garbage-collects containers. That line is not the container's log.
func LogBody(b []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, LogError(err)
	}
	if line := strings.TrimSpace(string(b)); strings.HasPrefix(line, kubeletNoLog) && !strings.Contains(line, "\n") {
		return nil, fmt.Errorf("the kubelet no longer has this log (it answered %q): it removes a dead container with its log, as when it evicts a pod for disk pressure", line)
	}
	return b, nil
}

const kubeletNoLog = "unable to retrieve container logs for "

// LogError says where a log read that was not refused failed: the API server asks the node's
// kubelet for every log, and a node with no kubelet to answer (a virtual node) or one the API
// server cannot reach fails the read in words of its own ("the server rejected our request for
// an unknown reason").
func LogError(err error) error {
	if err == nil || fault.KindOf(err) != fault.API {
		return err
	}
	return fmt.Errorf("%w; the API server could not get the log from the node's kubelet (a node with no kubelet, such as a virtual node, or one it cannot reach)", err)
}

func in(ns string) string {
	if ns == "" {
		return " (all namespaces)"
	}
	return " in " + ns
}

func (l LogRequest) describe() string {
	s := l.Namespace + "/" + l.Pod + " container " + l.Container
	if l.Previous {
		s += " (previous)"
	}
	return s
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

// EventTime is when an Event last happened: its last timestamp, its event time (events.k8s.io),
// or its creation.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// workers runs reads with a limit, and keeps a Gap for each that fails.
type workers struct {
	ctx      context.Context
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	gaps     []Gap
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
	w.locked(func() { w.gaps = append(w.gaps, Gap{What: what, Reason: reason}) })
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
