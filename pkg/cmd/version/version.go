// Package version is `kubectl ray version`: the client's version, and the API server's and the
// KubeRay operator's when the cluster is reachable.
package version

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	v "github.com/kubectl-ray/kubectl-ray/pkg/version"
)

// Info is the -o json|yaml document.
type Info struct {
	ClientVersion ClientVersion  `json:"clientVersion"`
	ServerVersion string         `json:"serverVersion,omitempty"`
	Operators     []ray.Operator `json:"operators,omitempty"`
	// Problems says what could not be read from the cluster; the client version is still valid.
	Problems []string `json:"problems,omitempty"`
}

// ClientVersion describes this binary.
type ClientVersion struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Options for `kubectl ray version`.
type Options struct {
	f          *cmdutil.Factory
	output     *cmdutil.OutputFlag
	clientOnly bool
}

// NewCmd returns `kubectl ray version`; runF, when set, gets the completed and validated options
// instead of Run (tests of the flags).
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{f: f}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client, API server and KubeRay operator versions",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	o.output = cmdutil.AddOutputFlag(cmd, formats...)
	cmd.Flags().BoolVar(&o.clientOnly, "client", false, "Print the client version only; do not contact the cluster")
	return cmd
}

func (o *Options) Complete(*cobra.Command, []string) error { return nil }
func (o *Options) Validate() error                         { return o.output.Validate() }

// Run prints what it could learn. An unreachable cluster is not an error here: the client version
// is still useful, and the problem is reported beside it.
func (o *Options) Run(cmd *cobra.Command) error {
	info := Info{ClientVersion: ClientVersion{
		Version: v.Version, Commit: v.Commit, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}}
	if !o.clientOnly {
		o.fillServer(cmd.Context(), &info)
	}
	err := report{info: info, clientOnly: o.clientOnly}.Write(o.f.IOStreams.Out, o.output.Value)
	if err != nil || o.output.Value != cmdutil.FormatText {
		return err // the document has its problems; text says them on stderr
	}
	for _, p := range info.Problems {
		fmt.Fprintf(o.f.IOStreams.ErrOut, "warning: %s\n", p)
	}
	return nil
}

func (o *Options) fillServer(ctx context.Context, info *Info) {
	c, err := o.f.Clients()
	if err != nil {
		info.Problems = append(info.Problems, err.Error())
		return
	}
	sv, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		info.Problems = append(info.Problems, kube.Explain(err, kube.Request{Verb: "get", Resource: "version", Host: c.Host()}).Error())
		return
	}
	info.ServerVersion = sv.GitVersion
	deps, err := c.ListDeployments(ctx, "")
	if err != nil {
		info.Problems = append(info.Problems, "cannot look for the KubeRay operator: "+err.Error())
		return
	}
	info.Operators = ray.FindOperators(deps)
}
