package doctor_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// watching is a doctor --watch running in a goroutine on fake clients loaded with the scene.
type watching struct {
	kc          *kfake.Clientset
	out, errOut *testio.Buffer
	ctx         context.Context
	cancel      context.CancelFunc
	done        chan error
}

func startWatch(t *testing.T, args ...string) *watching {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	core, ray := loadObjects(t, filepath.Join("testdata", "scene.yaml"))
	w := &watching{kc: kfake.NewClientset(core...), out: &testio.Buffer{}, errOut: &testio.Buffer{}, done: make(chan error, 1)}
	rc := rayfake.NewSimpleClientset(ray...)
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{In: strings.NewReader(""), Out: w.out, ErrOut: w.errOut})
	f.Now = func() time.Time { return now }
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: w.kc, Ray: rc}, nil
	}
	root := &cobra.Command{Use: "kubectl-ray", SilenceErrors: true, SilenceUsage: true}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(doctor.NewCmd(f, nil))
	root.SetArgs(append([]string{"doctor"}, args...))
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go func() { w.done <- root.ExecuteContext(w.ctx) }()
	return w
}

// TestWatchPrintsChanges: doctor --watch prints the findings there at the start, then what
// clears when the scene changes, and ends with exit 0 when its context ends (Ctrl-C).
func TestWatchPrintsChanges(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			w := startWatch(t, "-n", "ml", "--watch", "-o", format)
			out, errOut, ctx, cancel, done, kc := w.out, w.errOut, w.ctx, w.cancel, w.done, w.kc
			waitFor(t, out, "FOUND")
			time.Sleep(300 * time.Millisecond) // every FOUND line is printed at once; no change follows
			found := out.String()
			// The evicted head goes away: its findings clear, and the missing head is new.
			if err := kc.CoreV1().Pods("ml").Delete(ctx, "raycluster-a-head-abcde", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, out, "CLEARED")
			time.Sleep(300 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if exit.CodeOf(err) != exit.OK {
					t.Fatalf("ended with %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("did not end when its context ended")
			}
			if !strings.HasPrefix(out.String(), found) {
				t.Fatalf("the start was rewritten:\n%s", out.String())
			}
			golden.Assert(t, filepath.Join("testdata", "watch-"+format+".golden"), []byte(out.String()))
			if got, want := errOut.String(), "watching 3 RayClusters in namespace \"ml\"; Ctrl-C to stop\n"; got != want {
				t.Errorf("stderr: %q, want %q", got, want)
			}
		})
	}
}

// TestWatchSelector: -l applies to the RayClusters' labels, as in a one-shot run: the one
// cluster with live findings (team=ml) is left out.
func TestWatchSelector(t *testing.T) {
	w := startWatch(t, "-n", "ml", "--watch", "-l", "team!=ml")
	out, errOut, cancel, done := w.out, w.errOut, w.cancel, w.done
	waitFor(t, errOut, "watching")
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The others' spec findings (info, head-evictable-first) are printed; nothing of raycluster-a.
	if got := out.String(); !strings.HasPrefix(got, "EVENT ") || strings.Contains(got, "ml/raycluster-a ") {
		t.Fatalf("got %q, want the header and nothing of ml/raycluster-a", got)
	}
	if got, want := errOut.String(), "watching 3 RayClusters in namespace \"ml\" (-l team!=ml is applied to each); Ctrl-C to stop\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

func waitFor(t *testing.T, b *testio.Buffer, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), what) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 10s:\n%s", what, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatchRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"raycluster-a", "-n", "ml", "--watch"}, "error: --watch watches every RayCluster in scope, not one: use -n NAMESPACE or -A instead of a NAME\n"},
		{[]string{"-n", "ml", "--watch", "-o", "junit"}, "error: --watch prints one line per change: use -o table, -o wide or -o json, not -o junit\n"},
	} {
		res := run(t, "scene", nil, c.args...)
		if res.code != exit.Usage || res.stderr != c.want || res.stdout != "" {
			t.Errorf("%v: exit %d stderr %q stdout %q, want exit 2 and %q", c.args, res.code, res.stderr, res.stdout, c.want)
		}
	}
}
