package version

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

func TestFlagsParse(t *testing.T) {
	got, err := cmdtest.Parse(t, NewCmd, "-o", "yaml", "--client")
	if err != nil || got.output.Value != cmdutil.FormatYAML || !got.clientOnly {
		t.Errorf("err %v, options %+v", err, got)
	}
}
