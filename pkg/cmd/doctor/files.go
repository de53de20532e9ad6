package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
	"github.com/kubectl-ray/kubectl-ray/pkg/manifest"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// fileFlags are doctor -f's: manifests checked before they are applied (kuberay #736, #1009).
type fileFlags struct {
	paths     []string
	recursive bool
	offline   bool

	set *manifest.Set
	// online: the cluster answered, and its operator was read.
	online bool
	// offlineWhy says why no cluster was asked, for the report.
	offlineWhy string
}

func (ff *fileFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVarP(&ff.paths, "filename", "f", nil, "Check the RayClusters, RayServices and RayJobs in these files or directories (- for stdin) before they are applied, as kubectl apply -f reads them")
	cmd.Flags().BoolVarP(&ff.recursive, "recursive", "R", false, "With -f, read the directories below the ones named too")
	cmd.Flags().BoolVar(&ff.offline, "offline", false, "With -f, ask no cluster: only the rules about the spec run")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// validate refuses what -f cannot mean, before anything is read.
func (o *Options) validateFiles() error {
	ff := &o.files
	if len(ff.paths) == 0 {
		switch {
		case ff.recursive:
			return exit.Usagef("-R reads directories named by -f: add -f DIR")
		case ff.offline:
			return exit.Usagef("--offline checks files: add -f FILE")
		}
		return nil
	}
	switch {
	case o.target != nil:
		return exit.Usagef("-f checks the objects in the files: drop the NAME %q, or drop -f to check it in the cluster", o.target.Name)
	case o.allNamespaces || o.selector != "":
		return exit.Usagef("-f checks the objects in the files: -A and -l do not apply (their namespace is their own, or -n)")
	case o.watch:
		return exit.Usagef("-f checks files once: drop --watch")
	case o.ray.given && o.ray.on:
		return exit.Usagef("-f checks specs, not a running Ray: drop --ray")
	}
	return nil
}

// runFiles is doctor -f: read the files, check them with the rules about the spec, and, when a
// cluster answers, with the operator that would run them.
func (o *Options) runFiles(cmd *cobra.Command) error {
	ff := &o.files
	set, err := manifest.Read(manifest.Input{Paths: ff.paths, Recursive: ff.recursive, Stdin: o.f.IOStreams.In})
	if err != nil {
		return err
	}
	ff.set = set
	for _, e := range set.Errors {
		fmt.Fprintf(o.f.IOStreams.ErrOut, "error: %v\n", e)
	}
	if set.Empty() {
		if len(set.Errors) > 0 {
			return exit.Silent{Code: exit.Usage}
		}
		return exit.Usagef("no RayCluster, RayService or RayJob in %s (%d other documents skipped): nothing to check", describePaths(ff.paths), set.SkippedCount())
	}
	s := set.Snapshot(o.namespace, o.f.Now())
	ops := o.clusterFindings(cmdutil.Context(cmd), s)
	opts := o.acc.rules
	opts.SpecOnly = true
	r := diagnose.DiagnoseTarget(s, opts, nil)
	set.JudgeFields(operatorRelease(ops))
	r.Add(set.NoteFindings()...)
	if ops != nil {
		r.Operators = ops.Operators
		r.Blind = append(r.Blind, ops.Blind...)
		r.Add(ops.Findings...)
	}
	set.Locate(&r)
	o.applyAcceptance(&r)
	o.shown(&r)
	if err := o.output.Print(o.f.IOStreams.Out, o.report(&r)); err != nil {
		return err
	}
	if len(set.Errors) > 0 {
		return exit.Silent{Code: exit.Usage}
	}
	if t := o.threshold(); t != "" && r.Worst().Rank() >= t.Rank() {
		return exit.Silent{Code: exit.CheckFailed}
	}
	return nil
}

// clusterFindings asks the cluster that would run the documents, nil when none is asked or none
// answers: --offline, no kubeconfig, or an API server that does not answer within a few seconds,
// said once on stderr. When one answers, it returns the operator rules' findings (the KubeRay
// version, and what it lacks: before v1.2.0 it never replaces an evicted head), and sets on s
// what would admit and place the documents' heads (load.Admission).
func (o *Options) clusterFindings(ctx context.Context, s *state.Snapshot) *diagnose.Report {
	ff := &o.files
	if ff.offline {
		ff.offlineWhy = "--offline"
		return nil
	}
	c, err := o.f.Clients()
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = c.Ping(pctx)
		cancel()
	}
	if err != nil {
		ff.offlineWhy = "no cluster answered: " + exit.Message(err)
		fmt.Fprintf(o.f.IOStreams.ErrOut, "warning: checking offline, only the rules about the spec run: %s (pass --offline to say so)\n", exit.Message(err))
		return nil
	}
	ff.online = true
	load.Admission(ctx, c, s)
	ops := load.Operators(ctx, c, s.Now)
	// s gets them too: the rules about the documents say what this operator would do.
	s.Deployments = ops.Deployments
	r := diagnose.Diagnose(ops, o.acc.rules)
	return &r
}

// pingTimeout bounds the question "does a cluster answer?" of doctor -f: a CI job with a
// kubeconfig of a cluster it cannot reach must not hang on it.
const pingTimeout = 5 * time.Second

// describePaths names what -f read, for a message.
func describePaths(paths []string) string {
	if len(paths) == 1 {
		if paths[0] == "-" {
			return "stdin"
		}
		return paths[0]
	}
	return fmt.Sprintf("%d paths", len(paths))
}

// filesNamespace is where documents that name no namespace go, as kubectl apply puts them: -n,
// else the kubeconfig context's namespace, else "default". It reads the kubeconfig only, and a
// kubeconfig that is missing or broken is no reason to refuse checking a file.
func (o *Options) filesNamespace() string {
	if ns, _, err := o.f.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err == nil && ns != "" {
		return ns
	}
	if o.f.ConfigFlags.Namespace != nil && *o.f.ConfigFlags.Namespace != "" {
		return *o.f.ConfigFlags.Namespace
	}
	return "default"
}

// operatorRelease is the KubeRay release that would run the documents: the one version every
// operator found runs, "" offline, with none found, or with operators of several versions.
func operatorRelease(ops *diagnose.Report) string {
	if ops == nil {
		return ""
	}
	release := ""
	for _, op := range ops.Operators {
		if op.Version == "" || (release != "" && op.Version != release) {
			return ""
		}
		release = op.Version
	}
	return release
}
