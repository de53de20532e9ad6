package watchdog

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// A burst of heals keeps evidence for the first evidenceBurst only; the rest are healed without
// it, each saying why, so the reads never hold a burst's deletes back.
func TestKeeperBudgetsABurst(t *testing.T) {
	const n = 15
	var pods []runtime.Object
	var actions []repair.Action
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: fmt.Sprintf("h%02d", i), UID: types.UID(fmt.Sprintf("u%d", i))}}
		pods = append(pods, p)
		actions = append(actions, repair.Action{Rule: "head-evicted", Pod: state.Ref{Namespace: "ml", Name: p.Name, UID: string(p.UID)}})
	}
	// No refill during the test, whatever the machine's speed: the burst alone is measured.
	defer func(r rate.Limit) { evidenceRate = r }(evidenceRate)
	evidenceRate = 0
	var out bytes.Buffer
	keep, err := keeper(&kube.Clients{Kube: fake.NewClientset(pods...)}, Config{}, repair.NewLogger(&out, "logfmt", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, refused := 0, 0
	for _, a := range actions {
		where, err := keep(context.Background(), a)
		switch {
		case err == nil && where == "the watchdog's log (evidence="+a.Pod.UID+")":
			kept++
		case err != nil && strings.HasPrefix(err.Error(), "not kept: more heals at once than the evidence budget (10 at once, then 0 a second)"):
			refused++
		default:
			t.Errorf("%s: where %q, err %v", a.Pod.Name, where, err)
		}
	}
	if kept != evidenceBurst || refused != n-evidenceBurst {
		t.Errorf("kept %d, refused %d; want %d and %d", kept, refused, evidenceBurst, n-evidenceBurst)
	}
	if got := strings.Count(out.String(), `msg="evidence kept before delete"`); got != evidenceBurst {
		t.Errorf("%d evidence lines in the log, want %d", got, evidenceBurst)
	}
}
