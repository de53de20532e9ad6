package artifact

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

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

// Describe says in words how much of each log these limits keep.
func (l LogLimits) Describe() string {
	var parts []string
	if l.Tail >= 0 {
		parts = append(parts, fmt.Sprintf("the last %d lines", l.Tail))
	} else {
		parts = append(parts, "every line")
	}
	if l.LimitBytes > 0 {
		parts = append(parts, fmt.Sprintf("at most %d bytes", l.LimitBytes))
	}
	if l.Since > 0 {
		parts = append(parts, "since "+l.Since.String()+" before the bundle")
	}
	return strings.Join(parts, ", ") + " of each container, and of its previous instance where it restarted"
}

// LogRequest is one container log to read.
type LogRequest struct {
	Namespace, Pod, Container string
	// Init: an init container (sidecars are init containers with restartPolicy Always).
	Init bool
	// Previous: the log of the container's previous instance (it restarted).
	Previous bool
}

// Path is where the log goes in the archive.
func (l LogRequest) Path() string {
	name := l.Container
	if l.Previous {
		name += ".previous"
	}
	return "logs/" + l.Namespace + "/" + l.Pod + "/" + name + ".log"
}

// Describe names the log in a gap or an index: pod, container, and whether the previous one.
func (l LogRequest) Describe() string {
	s := l.Namespace + "/" + l.Pod + " container " + l.Container
	if l.Previous {
		s += " (previous)"
	}
	return s
}

// PodLogs are the logs of a pod's containers: init containers (and sidecars) first, then the
// others; the current log of each container that has started, and the previous one of each
// that restarted. A container that never started has no log to read, and is not asked for.
func PodLogs(pod *corev1.Pod) []LogRequest {
	var out []LogRequest
	add := func(specs []corev1.Container, statuses []corev1.ContainerStatus, init bool) {
		byName := map[string]*corev1.ContainerStatus{}
		for i := range statuses {
			byName[statuses[i].Name] = &statuses[i]
		}
		for _, c := range specs {
			st := byName[c.Name]
			if st == nil {
				continue
			}
			r := LogRequest{Namespace: pod.Namespace, Pod: pod.Name, Container: c.Name, Init: init}
			if st.State.Running != nil || st.State.Terminated != nil {
				out = append(out, r)
			}
			if st.RestartCount > 0 || st.LastTerminationState.Terminated != nil {
				r.Previous = true
				out = append(out, r)
			}
		}
	}
	add(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, true)
	add(pod.Spec.Containers, pod.Status.ContainerStatuses, false)
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
