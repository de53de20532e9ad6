package kube

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// RouteClientLogs sends what client-go logs through klog (leader election acquiring or losing
// the Lease, reflectors retrying while the API server is away) to line, as the watchdog's own
// structured lines with source=client-go. Without it klog writes its own plain-text format to
// stderr, and a log pipeline reading the watchdog's JSON lines gets lines it cannot parse.
// It changes process-wide state: only a long-running command that owns its output calls it, before
// it starts informers. klog's logger is set once per process (klog.SetLogger is not safe while
// other goroutines log); later calls only change where the lines go.
func RouteClientLogs(line func(level, msg string, kv ...any)) {
	routedLine.Store(&line)
	routeOnce.Do(func() { klog.SetLogger(logr.New(&klogSink{})) })
}

var (
	routeOnce  sync.Once
	routedLine atomic.Pointer[func(level, msg string, kv ...any)]
)

// klogSink is a logr.LogSink over the routed line function. klog's verbosity (-v, 0 by default)
// has already filtered what arrives; Enabled keeps only what klog logs unconditionally.
type klogSink struct {
	name   string
	values []any
}

func (s *klogSink) line(level, msg string, kv ...any) {
	if l := routedLine.Load(); l != nil && *l != nil {
		(*l)(level, msg, kv...)
	}
}

func (s *klogSink) Init(logr.RuntimeInfo) {}

func (s *klogSink) Enabled(level int) bool { return level <= 0 }

func (s *klogSink) Info(_ int, msg string, kv ...any) {
	s.line("info", strings.TrimSpace(msg), s.fields(kv)...)
}

// Error is "warn": client-go reports what it retries (a refused connection, an expired watch)
// as errors, and the watchdog carries on; errors that end it are logged by the watchdog itself.
func (s *klogSink) Error(err error, msg string, kv ...any) {
	kv = s.fields(kv)
	if err != nil {
		kv = append(kv, "error", err.Error())
	}
	s.line("warn", strings.TrimSpace(msg), kv...)
}

func (s *klogSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any(nil), s.values...), kv...)
	return &c
}

func (s *klogSink) WithName(name string) logr.LogSink {
	c := *s
	if c.name != "" {
		name = c.name + "/" + name
	}
	c.name = name
	return &c
}

func (s *klogSink) fields(kv []any) []any {
	out := []any{"source", "client-go"}
	if s.name != "" {
		out = append(out, "logger", s.name)
	}
	return append(append(out, s.values...), kv...)
}
