package heal

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/evidence"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Document is the -o json output, versioned like doctor's DoctorReport (docs/heal.md).
type Document struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Plan       repair.HealPlan `json:"plan"`
	Result     *repair.Report  `json:"result,omitempty"`
}

// runOnce: read, diagnose, plan, print the plan, confirm, delete, wait.
func (o *Options) runOnce(ctx context.Context) error {
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	plan, err := o.plan(ctx, c)
	if err != nil {
		return err
	}
	if o.force && plan.Stuck == 0 {
		return exit.Usagef("--force only force-deletes heads stuck Terminating on a down node, and doctor finds none%s; run without --force", o.where())
	}
	if o.removeGCSFT && plan.FinalizersStuck == 0 {
		return exit.Usagef("--remove-gcs-ft-finalizer only removes the Redis cleanup finalizer from RayClusters whose deletion it holds, and doctor finds none%s; run without it", o.where())
	}
	doc := Document{APIVersion: schema.APIVersion, Kind: "HealReport", Plan: plan}
	text := o.output.Value == cmdutil.FormatText
	out := o.f.IOStreams.Out
	if text {
		_ = o.write(out, doc, cmdutil.FormatText)
	}
	if plan.Empty() {
		if !text {
			return o.write(out, doc, o.output.Value)
		}
		return nil
	}
	if !o.yes && !o.dryRun {
		if !text && o.f.StdinIsTerminal() {
			// The document comes after the deletes: whoever answers sees the plan first.
			_ = o.write(o.f.IOStreams.ErrOut, doc, cmdutil.FormatText)
		}
		if err := o.confirm(len(plan.Actions), len(plan.FinalizerRemovals)); err != nil {
			if !text {
				_ = o.write(out, doc, o.output.Value)
			}
			return err
		}
	}
	ex := &repair.Executor{
		Deleter: c, Events: c, Watcher: c, Finalizers: c,
		Replan: func(ctx context.Context) (repair.HealPlan, error) { return o.plan(ctx, c) },
		DryRun: o.dryRun, Wait: o.wait, Timeout: o.timeout, Now: o.f.Now,
	}
	if !o.noEvidence {
		ex.Keep = o.keeper(c).Keep
	}
	if text {
		ex.Progress = func(oc repair.Outcome) { printOutcome(out, o.f.IOStreams.ErrOut, oc) }
		ex.FinalizerProgress = func(oc repair.FinalizerOutcome) { printFinalizerOutcome(out, o.f.IOStreams.ErrOut, oc) }
	}
	rep, runErr := ex.Run(ctx, plan)
	doc.Result = &rep
	if err := o.write(out, doc, o.output.Value); err != nil {
		return err
	}
	if runErr != nil {
		return kube.Explain(runErr, kube.Request{Verb: "watch", Resource: "pods", Namespace: o.namespace})
	}
	if n := rep.Problems(); n > 0 {
		// RBAC refusing the delete is a permission problem, not a failed check: exit 4 with the
		// line that names the verb and resource.
		for _, oc := range rep.Outcomes {
			if oc.Result == repair.Failed && exit.CodeOf(oc.Err) == exit.Forbidden {
				return oc.Err
			}
		}
		for _, oc := range rep.Finalizers {
			if oc.Result == repair.Failed && exit.CodeOf(oc.Err) == exit.Forbidden {
				return oc.Err
			}
		}
		return exit.Errorf(exit.CheckFailed, "%d of %d actions failed; see the lines above", n, len(plan.Actions)+len(plan.FinalizerRemovals))
	}
	if rep.TimedOut {
		var late []string
		for _, r := range rep.Replacements {
			if !r.Ready {
				late = append(late, r.Cluster.Namespace+"/"+r.Cluster.Name)
			}
		}
		return exit.Errorf(exit.CheckFailed, "no Running and Ready head within %s for RayCluster %s; check the KubeRay operator's logs, then `kubectl ray doctor`",
			o.timeout, strings.Join(late, ", "))
	}
	return nil
}

// plan reads the snapshot (one paged LIST per kind), runs doctor's rules and plans.
func (o *Options) plan(ctx context.Context, c *kube.Clients) (repair.HealPlan, error) {
	s, err := load.FromAPI(ctx, c, load.Query{Namespace: o.namespace, Now: o.f.Now(), Reads: diagnose.Reads})
	if err != nil {
		return repair.HealPlan{}, err
	}
	var target *diagnose.Target
	if o.name != "" {
		target = &diagnose.Target{Kind: "RayCluster", Name: o.name}
		if !diagnose.Has(s, *target) {
			return repair.HealPlan{}, cmdutil.NotFound(o.name, o.namespace, "", "RayCluster")
		}
	}
	o.snapshot = s
	r := diagnose.DiagnoseTarget(s, o.rules, target)
	findings, accepted, st := o.withoutAccepted(s, &r, accept.Scope{Namespace: o.namespace, Narrowed: target != nil})
	if st != nil && !o.warnedAccept {
		o.warnedAccept = true // once, not again after a re-plan
		accept.Warn(o.f.IOStreams.ErrOut, *st)
	}
	plan := repair.Plan(s, findings, repair.Options{Force: o.force, StaleWorkers: o.staleWorkers, RemoveGCSFTFinalizer: o.removeGCSFT, Name: exit.Flag})
	plan.Accepted = accepted
	return plan, nil
}

// keeper keeps each pod's evidence under --evidence-dir before its delete, redacted with the
// secrets of the snapshot heal planned from.
func (o *Options) keeper(c *kube.Clients) evidence.Keeper {
	return evidence.Keeper{
		Taker:    evidence.Taker{Src: c, Limits: evidence.Limits, Now: o.f.Now},
		Pods:     c,
		Timeout:  evidence.DefaultTimeout,
		Snapshot: func(repair.Action) *state.Snapshot { return o.snapshot },
		Put:      func(ev evidence.Evidence) (string, error) { return evidence.WriteDir(o.evidenceDir, ev) },
	}
}

// confirm asks on a terminal; without one it refuses, since nobody can answer.
func (o *Options) confirm(n, finalizers int) error {
	var what []string
	if n > 0 {
		what = append(what, "delete "+plural(n, "head pod", "head pods"))
	}
	if finalizers > 0 {
		what = append(what, "remove the Redis cleanup finalizer from "+plural(finalizers, "RayCluster", "RayClusters")+" (their GCS data stays in Redis)")
	}
	q := strings.Join(what, " and ")
	return o.f.Confirm(cmdutil.Confirmation{
		Prompt:   fmt.Sprintf("%s%s? [y/N]: ", strings.ToUpper(q[:1]), q[1:]),
		Refusal:  "refusing to delete without confirmation: stdin is not a terminal; pass --yes to heal without asking",
		Declined: "not confirmed; nothing was deleted",
	})
}

func (o *Options) where() string {
	switch {
	case o.name != "":
		return fmt.Sprintf(" for RayCluster %s/%s", o.namespace, o.name)
	case o.namespace != "":
		return fmt.Sprintf(" in namespace %s", o.namespace)
	}
	return " in any namespace"
}
