package e2e

import (
	"testing"
)

// chaos drain and worker-kill refuse bad input with one line and the documented exit code, through
// the real binary, before anything is cordoned or killed.
func TestDrainAndWorkerKillInputErrors(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	svc := []string{"--service", "s", "--port", "8000", "-n", h.NS, "--yes"}
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"chaos", "drain"}, 2, "error: name the node to drain, or pick it with --node-of raycluster/NAME|rayservice/NAME"},
		{append([]string{"chaos", "drain", "n1", "--node-of", "raycluster/x"}, svc...), 2, "error: a NODE and --node-of exclude each other: give one"},
		{append([]string{"chaos", "drain", "--node-of", "pod/x"}, svc...), 2, `error: --node-of "pod/x": name a RayCluster (raycluster/NAME) or a RayService (rayservice/NAME)`},
		{append([]string{"chaos", "drain", "--node-of", "raycluster/x", "--role", "boss"}, svc...), 2, `error: --role must be head, worker or any, not "boss"`},
		{[]string{"chaos", "drain", "n1", "--yes"}, 2, "error: say what to probe while the node drains: --service NAME --port N, --target URL, or --node-of rayservice/NAME (its serve Service)"},
		{append([]string{"chaos", "drain", "n1", "--after", "5s", "--until-recovered"}, svc...), 2, "error: --after and --until-recovered exclude each other: give one"},
		{append([]string{"chaos", "drain", "no-such-node"}, svc...), 5, `error: node "no-such-node" not found; list them with: kubectl get nodes`},
		{append([]string{"chaos", "drain", "n1", "-o", "junit"}, svc...), 2, `error: unknown output format "junit": use -o text|json`},
		{append([]string{"chaos", "worker-kill", "x"}, svc...), 2, "error: say which workers to kill: --count N, --percent P, or --serve-replicas"},
		{append([]string{"chaos", "worker-kill", "x", "--count", "1", "--percent", "5"}, svc...), 2, "error: say how many workers to kill with one of --count N and --percent P, not both"},
		{append([]string{"chaos", "worker-kill", "x", "--percent", "150"}, svc...), 2, "error: --percent is a percentage from 0 to 100, not 150"},
		{append([]string{"chaos", "worker-kill", "x", "--count", "1", "--mode", "nuke"}, svc...), 2, `error: --mode must be delete, force or evict, not "nuke"`},
		{[]string{"chaos", "worker-kill", "x", "--count", "1", "-n", h.NS, "--yes"}, 2, "error: say what to probe for RayCluster x: --target URL, or --service NAME --port N"},
		{append([]string{"chaos", "worker-kill", "nope", "--count", "1"}, svc...), 5, `error: RayCluster "nope" not found in namespace "` + h.NS + `"; list them with: kubectl get rayclusters -n ` + h.NS},
	} {
		res := h.Run(c.args...)
		wantOneLineError(t, res, c.code)
		if res.Stderr != c.line+"\n" {
			t.Errorf("%v: got %q, want %q", c.args, res.Stderr, c.line)
		}
	}
}
