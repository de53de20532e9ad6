package watchdog

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/evidence"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// The watchdog's evidence reads are smaller than one-shot heal's: what it keeps goes to its log,
// in lines of at most evidence.MaxLineBytes, and must not wait long on kubelets that no longer
// answer. They are made on a client of their own, so they never take the deletes' rate limit,
// and within a budget: evidence for evidenceBurst heals at once, then evidenceRate a second. A
// burst beyond it (a node dying under 200 heads, docs/performance.md "A burst") heals the rest
// without evidence, each saying so: the reads before each delete would otherwise hold every
// delete of the burst back (about 3 requests a head).
var (
	watchLimits                 = artifact.LogLimits{Tail: 100, LimitBytes: 2 * evidence.MaxLineBytes}
	watchTimeout                = 5 * time.Second
	evidenceQPS, evidenceBurstQ = float32(20), 40
	evidenceRate                = rate.Limit(1)
	evidenceBurst               = 10
)

// keeper keeps a pod's evidence in the watchdog's own log, where the cluster's log collection
// keeps it after the watchdog's pod is gone (docs/heal.md says why not an object in the cluster),
// and also under cfg.EvidenceDir when one is given. snapshot is the informers' view of the
// action's cluster, whose secrets the redactor must know.
func keeper(c *kube.Clients, cfg Config, log *repair.Logger, snapshot func(repair.Action) *state.Snapshot) (func(context.Context, repair.Action) (string, error), error) {
	ec, err := c.WithOwnRateLimit(evidenceQPS, evidenceBurstQ)
	if err != nil {
		return nil, err
	}
	budget := rate.NewLimiter(evidenceRate, evidenceBurst)
	k := evidence.Keeper{
		Taker:    evidence.Taker{Src: ec, Limits: watchLimits, Now: cfg.Now},
		Pods:     ec,
		Timeout:  watchTimeout,
		Snapshot: snapshot,
		Put: func(ev evidence.Evidence) (string, error) {
			for _, l := range ev.LogLines() {
				log.Line("info", l.Msg, l.KV...)
			}
			where := "the watchdog's log (evidence=" + string(ev.Pod.UID) + ")"
			if cfg.EvidenceDir == "" {
				return where, nil
			}
			dir, err := evidence.WriteDir(cfg.EvidenceDir, ev)
			if err != nil {
				// The log has it: say the directory failed, not that nothing was kept.
				return where, err
			}
			return where + " and " + dir, nil
		},
	}
	return func(ctx context.Context, a repair.Action) (string, error) {
		if !budget.Allow() {
			return "", fmt.Errorf("not kept: more heals at once than the evidence budget (%d at once, then %g a second); the outage comes first", evidenceBurst, float64(evidenceRate))
		}
		return k.Keep(ctx, a)
	}, nil
}
