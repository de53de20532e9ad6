package version

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

func TestFlagsParse(t *testing.T) {
	var got *Options
	err := cmdtest.Run(t, func(f *cmdutil.Factory) *cobra.Command {
		return NewCmd(f, func(o *Options) error { got = o; return nil })
	}, "-o", "yaml", "--client")
	if err != nil || got.output.Value != cmdutil.FormatYAML || !got.clientOnly {
		t.Errorf("err %v, options %+v", err, got)
	}
}
