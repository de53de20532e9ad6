package accept

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"
)

const header = "apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\n"

func TestParseGood(t *testing.T) {
	s, err := Load([]string{"testdata/accept.yaml"}, FromFlag, readTestdata)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != 2 {
		t.Fatalf("entries %+v", s.Entries)
	}
	e := s.Entries[0]
	if strings.Join(e.Rules, ",") != "head-crashloop,status-stale" || e.Cluster != "ml/train-*" || e.Operator != "" ||
		e.Reason != "the ML team is fixing the image (JIRA-123)" || e.Pos.String() != "testdata/accept.yaml:7" ||
		!e.Expires.Equal(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)) || e.ExpiresText != "2025-07-01" {
		t.Errorf("entry 0: %+v", e)
	}
	op := s.Entries[1]
	if op.Operator != "kuberay-system/kuberay-operator" || op.Pos.Line != 11 || !op.Expires.Equal(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("entry 1: %+v", op)
	}
	o := s.Options()
	if o.PendingTooLong != 10*time.Minute || o.RecentOOM != 30*time.Minute || o.OperatorGrace != 2*time.Minute {
		t.Errorf("options %+v", o)
	}
	if s.Thresholds["pendingTooLong"].Pos.String() != "testdata/accept.yaml:4" {
		t.Errorf("threshold pos %v", s.Thresholds["pendingTooLong"].Pos)
	}
}

// Every malformed file is one error naming file:line and the fix; nothing is half-accepted.
func TestParseErrors(t *testing.T) {
	entry := func(body string) string {
		return header + "accept:\n- " + strings.ReplaceAll(body, "\n", "\n  ") + "\n"
	}
	good := "rules: [head-crashloop]\ncluster: ml/a\nreason: r\nexpires: 2025-07-01"
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "", "f.yaml: empty; an accept file starts with apiVersion: kubectl-ray.io/v1alpha1 and kind: AcceptedFindings"},
		{"not yaml", header + "accept: [\n", "f.yaml:3: not valid YAML: did not find expected node content"},
		{"not a mapping", "- a\n", "f.yaml:1: an accept file is a mapping"},
		{"no apiVersion", "kind: AcceptedFindings\n", "f.yaml:1: no apiVersion; start the file with apiVersion: kubectl-ray.io/v1alpha1"},
		{"wrong apiVersion", "apiVersion: kubectl-ray.io/v2\nkind: AcceptedFindings\n", `f.yaml:1: apiVersion "kubectl-ray.io/v2" is not supported; use apiVersion: kubectl-ray.io/v1alpha1`},
		{"no kind", "apiVersion: kubectl-ray.io/v1alpha1\n", "f.yaml:1: no kind; add kind: AcceptedFindings"},
		{"wrong kind", "apiVersion: kubectl-ray.io/v1alpha1\nkind: Popeye\n", `f.yaml:2: kind "Popeye" is not an accept file; use kind: AcceptedFindings`},
		{"unknown top field", header + "ignore: []\n", `f.yaml:3: unknown field "ignore"; the fields are apiVersion, kind, thresholds, accept`},
		{"twice", header + "kind: AcceptedFindings\n", "f.yaml:3: kind is set twice; keep one"},
		{"accept not a list", header + "accept: {}\n", "f.yaml:3: accept is a list of entries"},
		{"entry not a mapping", header + "accept:\n- head-crashloop\n", "f.yaml:4: an entry is a mapping"},
		{"unknown entry field", entry(good + "\nnamespace: ml"), `f.yaml:8: unknown field "namespace" in an accept entry; the fields are rules, cluster, operator, rayJob, rayService, file, reason, expires`},
		{"no rules", entry("cluster: ml/a\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: an entry needs rules, a list of rule IDs"},
		{"rules not a list", entry("rules: head-crashloop\ncluster: ml/a\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: an entry needs rules"},
		{"unknown rule", entry("rules: [head-crashlop]\ncluster: ml/a\nreason: r\nexpires: 2025-07-01"), `f.yaml:4: unknown rule "head-crashlop"; rule IDs are listed in docs/rules.md`},
		{"operator rule on a cluster", entry("rules: [operator-outdated]\ncluster: ml/a\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: rule operator-outdated is about the KubeRay operator: match it with operator: NAMESPACE/NAME, not cluster"},
		{"cluster rule on the operator", entry("rules: [head-crashloop]\noperator: a/b\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: rule head-crashloop is about a RayCluster"},
		{"no match", entry("rules: [head-crashloop]\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: an entry needs cluster: NAMESPACE/NAME"},
		{"both matches", entry("rules: [head-crashloop]\ncluster: a/b\noperator: a/b\nreason: r\nexpires: 2025-07-01"), "f.yaml:6: an entry matches a cluster, the operator, a RayJob, a RayService or a file, only one of them"},
		{"cluster and RayJob", entry("rules: [rayjob-failed]\ncluster: a/b\nrayJob: a/b\nreason: r\nexpires: 2025-07-01"), "f.yaml:6: an entry matches a cluster, the operator, a RayJob, a RayService or a file, only one of them"},
		{"RayJob rule on a cluster", entry("rules: [rayjob-failed]\ncluster: ml/a\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: rule rayjob-failed is about a RayJob: match it with rayJob: NAMESPACE/NAME, not cluster"},
		{"RayService rule on a cluster", entry("rules: [rayservice-no-cluster]\ncluster: serve/web\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: rule rayservice-no-cluster is about a RayService itself: match it with rayService: NAMESPACE/NAME, not cluster"},
		{"cluster rule on a RayService", entry("rules: [serve-no-endpoints]\nrayService: serve/web\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: rule serve-no-endpoints is about a RayCluster: match it with cluster: NAMESPACE/NAME, not rayService"},
		{"cluster rule on a RayJob", entry("rules: [head-crashloop]\nrayJob: ml/a\nreason: r\nexpires: 2025-07-01"), "f.yaml:4: rule head-crashloop is about a RayCluster: match it with cluster: NAMESPACE/NAME, not rayJob"},
		{"glob without namespace", entry("rules: [head-crashloop]\ncluster: train-*\nreason: r\nexpires: 2025-07-01"), `f.yaml:5: cluster "train-*" is not NAMESPACE/NAME`},
		{"glob with two slashes", entry("rules: [head-crashloop]\ncluster: a/b/c\nreason: r\nexpires: 2025-07-01"), `f.yaml:5: cluster "a/b/c" is not NAMESPACE/NAME`},
		{"bad glob", entry("rules: [head-crashloop]\ncluster: ml/train-[\nreason: r\nexpires: 2025-07-01"), `f.yaml:5: cluster "ml/train-[" is not a valid glob`},
		{"no reason", entry("rules: [head-crashloop]\ncluster: ml/a\nexpires: 2025-07-01"), "f.yaml:4: an entry needs a reason"},
		{"blank reason", entry("rules: [head-crashloop]\ncluster: ml/a\nreason: \"  \"\nexpires: 2025-07-01"), "f.yaml:6: an entry needs a reason"},
		{"no expires", entry("rules: [head-crashloop]\ncluster: ml/a\nreason: r"), "f.yaml:4: an entry needs expires: a date (YYYY-MM-DD)"},
		{"bad date", entry("rules: [head-crashloop]\ncluster: ml/a\nreason: r\nexpires: 2025-13-01"), `f.yaml:7: expires "2025-13-01" is not a date; write YYYY-MM-DD`},
		{"date in words", entry("rules: [head-crashloop]\ncluster: ml/a\nreason: r\nexpires: next week"), `f.yaml:7: expires "next week" is not a date`},
		{"unknown threshold", header + "thresholds:\n  pendingTooLongg: 1m\n", `f.yaml:4: unknown field "pendingTooLongg" in thresholds; the fields are pendingTooLong, `},
		{"threshold no unit", header + "thresholds:\n  pendingTooLong: 300\n", `f.yaml:4: thresholds.pendingTooLong: "300" is not a duration; write it with a unit`},
		{"threshold negative", header + "thresholds:\n  recentOOM: -1h\n", "f.yaml:4: thresholds.recentOOM: -1h0m0s must be positive"},
		{"threshold zero", header + "thresholds:\n  operatorGrace: 0s\n", "f.yaml:4: thresholds.operatorGrace: 0s must be positive"},
		{"thresholds not a mapping", header + "thresholds: 5m\n", "f.yaml:3: thresholds is a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("f.yaml", []byte(tc.file))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("want a ParseError, got %v (set %+v)", err, s)
			}
			if !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error\n  got  %q\n  want %q...", err, tc.want)
			}
		})
	}
}

func TestLocate(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvVar {
				return v
			}
			return ""
		}
	}
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	for _, tc := range []struct {
		name   string
		flags  []string
		env    string
		exists func(string) bool
		want   string
		from   Source
	}{
		{"flags win", []string{"a.yaml", "b.yaml"}, "c.yaml", yes, "a.yaml b.yaml", FromFlag},
		{"then the environment", nil, "c.yaml:d.yaml", yes, "c.yaml d.yaml", FromEnv},
		{"then the default file", nil, "", yes, DefaultFile, FromDefault},
		{"an empty variable is unset", nil, ":", yes, DefaultFile, FromDefault},
		{"nothing", nil, "", no, "", FromNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from := Locate(tc.flags, env(tc.env), tc.exists)
			if strings.Join(got, " ") != tc.want || from != tc.from {
				t.Errorf("got %v from %q, want %q from %q", got, from, tc.want, tc.from)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	files := map[string]string{
		"a.yaml": header + "thresholds:\n  pendingTooLong: 1m\n",
		"b.yaml": header + "thresholds:\n  recentOOM: 1m\n  pendingTooLong: 2m\n",
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if _, err := Load([]string{"a.yaml", "b.yaml"}, FromFlag, read); err == nil ||
		err.Error() != "b.yaml:5: thresholds.pendingTooLong is also set at a.yaml:4; set it in one file" {
		t.Errorf("duplicate threshold: %v", err)
	}
	if _, err := Load([]string{"nope.yaml"}, FromEnv, read); err == nil ||
		err.Error() != "nope.yaml: cannot read the accept file named by $KUBECTL_RAY_ACCEPT: no such file; check the path" {
		t.Errorf("missing file: %v", err)
	}
	s, err := Load([]string{"a.yaml"}, FromFlag, read)
	if err != nil || s.Options().PendingTooLong != time.Minute || strings.Join(s.Files, ",") != "a.yaml" {
		t.Errorf("a.yaml: %v %+v", err, s)
	}
}
