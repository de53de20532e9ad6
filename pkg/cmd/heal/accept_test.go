package heal

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// A KUBECTL_RAY_ACCEPT in the developer's environment must not change these tests.
func init() { os.Unsetenv("KUBECTL_RAY_ACCEPT") }

func writeAccept(t *testing.T, expires string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "accept.yaml")
	body := "apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\naccept:\n" +
		"- rules: [head-evicted]\n  cluster: default/raycluster-*\n  reason: kept for a post-mortem\n  expires: " + expires + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// heal leaves an accepted head alone and says so in the plan; --include-accepted heals it.
func TestAcceptedHeadIsNotHealed(t *testing.T) {
	file := writeAccept(t, "2024-06-01") // t0 is 2024-05-08
	e, _ := seedEnv()
	if err := e.run(context.Background(), "--yes", "--wait=false", "--accept", file); err != nil {
		t.Fatal(err)
	}
	want := "Skipped as accepted: 1\n" +
		"  pod default/raycluster-kuberay-head-ldg9f of RayCluster raycluster-kuberay (head-evicted): accepted, expires 2024-06-01 (" + file +
		":4): kept for a post-mortem; pass --include-accepted to heal it anyway\n" +
		"Nothing to heal in namespace default.\n"
	if e.out.String() != want || len(e.deletes()) != 0 {
		t.Errorf("stdout:\n%s\nwant:\n%s\ndeletes: %d", e.out, want, len(e.deletes()))
	}
	if e.errOut.String() != "" {
		t.Errorf("stderr: %s", e.errOut)
	}

	e, _ = seedEnv()
	if err := e.run(context.Background(), "--yes", "--wait=false", "--accept", file, "--include-accepted"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.out.String(), seedPlan) || len(e.deletes()) != 1 {
		t.Errorf("--include-accepted: stdout:\n%s\ndeletes: %d", e.out, len(e.deletes()))
	}
}

// An expired entry accepts nothing: heal acts, and warns naming file:line.
func TestExpiredAcceptanceHeals(t *testing.T) {
	file := writeAccept(t, "2024-05-08") // expired at 00:00 that day, before t0
	e, _ := seedEnv()
	if err := e.run(context.Background(), "--yes", "--wait=false", "--accept", file); err != nil {
		t.Fatal(err)
	}
	if len(e.deletes()) != 1 || !strings.HasPrefix(e.out.String(), seedPlan) {
		t.Errorf("stdout:\n%s\ndeletes: %d", e.out, len(e.deletes()))
	}
	want := "warning: " + file + ":4: accepted head-evicted on cluster default/raycluster-* expired on 2024-05-08, so its findings count again; fix them, or renew expires with a reason\n"
	if e.errOut.String() != want {
		t.Errorf("stderr %q, want %q", e.errOut, want)
	}
}

// A malformed accept file: usage error, nothing read or deleted.
func TestMalformedAcceptHealsNothing(t *testing.T) {
	file := writeAccept(t, "someday")
	e, _ := seedEnv()
	err := e.run(context.Background(), "--yes", "--accept", file)
	if exit.CodeOf(err) != exit.Usage || !strings.HasPrefix(err.Error(), file+`:7: expires "someday" is not a date`) {
		t.Fatalf("err %v (code %d)", err, exit.CodeOf(err))
	}
	if n := len(e.kc.Actions()) + len(e.rc.Actions()); n != 0 {
		t.Errorf("%d API calls", n)
	}
}

// The watchdog logs the entries already expired when it starts.
func TestWatchLogsExpiredEntries(t *testing.T) {
	e, _ := seedEnv()
	o := &Options{f: e.f}
	set, err := accept.Load([]string{writeAccept(t, "2024-05-01")}, accept.FromFlag, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	o.acceptSet = set
	var buf bytes.Buffer
	o.logExpired(repair.NewLogger(&buf, "logfmt", e.f.Now))
	if !strings.Contains(buf.String(), `level=warn msg="accepted entry expired; its findings count again"`) ||
		!strings.Contains(buf.String(), `expires=2024-05-01`) || !strings.Contains(buf.String(), ":4") {
		t.Errorf("log: %s", buf.String())
	}
	buf.Reset()
	o.acceptSet, _ = accept.Load([]string{writeAccept(t, "2024-06-01")}, accept.FromFlag, os.ReadFile)
	o.logExpired(repair.NewLogger(&buf, "logfmt", e.f.Now))
	if buf.Len() != 0 {
		t.Errorf("a live entry was logged as expired: %s", buf.String())
	}
}
