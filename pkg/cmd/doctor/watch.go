package doctor

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/doctorprint"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
)

// WatchResync is how often doctor --watch examines every RayCluster again with no object
// changing: findings that depend on time alone (a head Pending past its threshold) appear then.
const WatchResync = 30 * time.Second

// validateWatch refuses what --watch cannot do, one line each.
func (o *Options) validateWatch() error {
	if !o.watch {
		return nil
	}
	switch {
	case o.target != nil:
		return exit.Usagef("--watch watches every RayCluster in scope, not one: use -n NAMESPACE or -A instead of a NAME")
	case !slices.Contains([]cmdutil.Format{cmdutil.FormatTable, cmdutil.FormatWide, cmdutil.FormatJSON}, o.output.Value):
		return exit.Usagef("--watch prints one line per change: use -o table, -o wide or -o json, not -o %s", o.output.Value)
	}
	return nil
}

// runWatch is doctor --watch: the heal watchdog's informers (RayClusters, Ray pods, nodes, head
// Events) feed the same rules at every change of a RayCluster; the findings there at the start
// are printed, then each finding that appears or clears. It ends on Ctrl-C or SIGTERM (exit 0),
// or on an error no retry can fix (RBAC revoked).
func (o *Options) runWatch(ctx context.Context, c *kube.Clients) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	queue := workqueue.NewTyped[types.NamespacedName]()
	inf, err := load.NewInformers(c, o.namespace, true, diagnose.KeepEvent, queue.Add)
	if err != nil {
		return err
	}
	errOut := o.f.IOStreams.ErrOut
	inf.Warn = func(resource string, err error) {
		fmt.Fprintf(errOut, "warning: the watch of %s was interrupted (%v); it lists again\n", resource, err)
	}
	if err := inf.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fatal := make(chan error, 1)
	go func() {
		select {
		case err := <-inf.Fatal():
			fatal <- err
			stop()
		case <-ctx.Done():
		}
		queue.ShutDown()
	}()
	go resync(ctx, inf, queue)
	keys := inf.Keys()
	scope := fmt.Sprintf("in namespace %q", o.namespace)
	if o.namespace == "" {
		scope = "in all namespaces"
	}
	if o.selector != "" {
		scope += " (-l " + o.selector + " is applied to each)"
	}
	fmt.Fprintf(errOut, "watching %s %s; Ctrl-C to stop\n", doctorprint.Plural(len(keys), "RayCluster"), scope)

	p := &changePrinter{w: o.f.IOStreams.Out, json: o.output.Value == cmdutil.FormatJSON, wide: o.output.Value == cmdutil.FormatWide}
	seen := map[types.NamespacedName][]diagnose.Finding{}
	var found []diagnose.Change
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		seen[k] = o.examine(inf, k)
		for _, f := range seen[k] {
			found = append(found, diagnose.Change{Type: diagnose.Found, Finding: f})
		}
	}
	if err := p.print(found); err != nil {
		return err
	}
	for {
		k, quit := queue.Get()
		if quit {
			break
		}
		now := o.examine(inf, k)
		err := p.print(diagnose.Changes(seen[k], now))
		seen[k] = now
		queue.Done(k)
		if err != nil {
			return err
		}
	}
	select {
	case err := <-fatal:
		return err
	default:
		return nil
	}
}

// resync queues every RayCluster each WatchResync, until ctx ends.
func resync(ctx context.Context, inf *load.Informers, queue workqueue.TypedInterface[types.NamespacedName]) {
	t := time.NewTicker(WatchResync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, k := range inf.Keys() {
				queue.Add(k)
			}
		}
	}
}

// examine is the findings of one RayCluster now, as the one-shot doctor shows them: accepted
// findings and those below --min-severity left out, -l applied to the RayCluster's labels.
func (o *Options) examine(inf *load.Informers, k types.NamespacedName) []diagnose.Finding {
	s, ok := inf.Snapshot(k, o.f.Now())
	if !ok || len(s.Clusters) != 1 {
		return nil
	}
	if sel, err := labels.Parse(o.selector); err != nil || !sel.Matches(labels.Set(s.Clusters[0].Labels)) {
		return nil
	}
	r := diagnose.Diagnose(s, o.acc.rules)
	if o.acc.set != nil {
		accept.Apply(&r, o.acc.set, accept.Scope{Namespace: o.namespace, Narrowed: true})
	}
	o.shown(&r)
	var out []diagnose.Finding
	for _, f := range r.Findings {
		if f.Accepted == nil && f.Cluster.Namespace == k.Namespace && f.Cluster.Name == k.Name {
			out = append(out, f)
		}
	}
	return out
}
