package upgrade

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
)

// reportStart is when the reports' probe starts; reportAt is ms after it.
var reportStart = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

func reportAt(ms int) time.Time { return reportStart.Add(time.Duration(ms) * time.Millisecond) }

// upgradeInput is an 8 s run at 10/s with the patch at 2 s: traffic moves from old's pods to
// new's at 4.5 s, with one request in the probe's gap between them (no-endpoint).
func upgradeInput(switched bool) reportInput {
	res := &probe.Result{Start: reportStart, Rate: 10, Duration: 8 * time.Second, Elapsed: 8 * time.Second,
		Endpoints: []string{"old-head", "old-worker", "new-head", "new-worker"}}
	for i := range 80 {
		sched := time.Duration(i) * 100 * time.Millisecond
		rec := probe.Record{Scheduled: sched, Sent: sched, Latency: 2 * time.Millisecond, Class: probe.ClassHTTP, Status: 200, Endpoint: uint16(i % 2)}
		switch {
		case switched && i == 45:
			rec.Class, rec.Status, rec.Endpoint, rec.Latency = probe.ClassNoEndpoint, 0, 4, 0
		case switched && i > 45:
			rec.Endpoint = uint16(2 + i%2)
		}
		res.Records = append(res.Records, rec)
	}
	ev := []timeline.Event{
		{Kind: timeline.EndpointAdded, At: reportAt(0), Object: "old-head"},
		{Kind: timeline.EndpointAdded, At: reportAt(0), Object: "old-worker"},
		{Kind: timeline.UpgradePatched, At: reportAt(2000), Object: "svc", Detail: "image rayproject/ray:2.47.0"},
		{Kind: timeline.RayServicePendingCluster, At: reportAt(2100), Object: "svc", To: "new"},
		{Kind: timeline.PendingHeadReady, At: reportAt(3000), Object: "new-head", Detail: "cluster new"},
	}
	last := "pending cluster new, its head Ready, apps app DEPLOYING; traffic still on old"
	if switched {
		ev = append(ev,
			timeline.Event{Kind: timeline.ServeAppsReady, At: reportAt(4000), Object: "new", Detail: "app"},
			timeline.Event{Kind: timeline.RayServicePendingCluster, At: reportAt(4500), Object: "svc", From: "new"},
			timeline.Event{Kind: timeline.RayServiceActiveCluster, At: reportAt(4500), Object: "svc", From: "old", To: "new"},
			timeline.Event{Kind: timeline.OldClusterDeleted, At: reportAt(6000), Object: "old"})
		last = "traffic on the new cluster new; the old cluster old deleted"
	}
	maxErrors := int64(1)
	return reportInput{
		Input: availability.Input{Probe: res, Timeline: timeline.New(ev...), SLO: availability.SLO{MaxErrors: &maxErrors}},
		Settings: ReportSettings{RayService: "svc", Namespace: "ml", Image: "rayproject/ray:2.47.0", Patch: `{"spec":{}}`,
			Target: "service/svc-serve-svc:8000", Method: "GET", Path: "/fruit", Rate: 10, WarmupMs: 2000, TimeoutMs: 60000, RequestTimeout: 2000},
		OldCluster: "old", LastSeen: last, Strategy: "NewCluster"}
}

func TestUpgradeReportGolden(t *testing.T) {
	for _, c := range []struct {
		name     string
		switched bool
	}{{"upgrade", true}, {"upgrade-not-switched", false}} {
		r := buildReport(upgradeInput(c.switched))
		if r.Verdict.Passed != c.switched || r.Upgrade.Switched != c.switched || r.Verdict.Checks[0].Name != CheckSwitch {
			t.Errorf("%s: verdict %+v upgrade %+v", c.name, r.Verdict, r.Upgrade)
		}
		var txt, js bytes.Buffer
		if err := WriteText(&txt, r, false); err != nil {
			t.Fatal(err)
		}
		if err := availability.WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, filepath.Join("testdata", c.name+".txt"), txt.Bytes())
		golden.Assert(t, filepath.Join("testdata", c.name+".json"), js.Bytes())
	}
	u := buildReport(upgradeInput(true)).Upgrade
	if *u.PendingClusterCreatedMs != 100 || *u.NewHeadReadyMs != 1000 || *u.ServeAppsReadyMs != 2000 || *u.ActiveSwitchedMs != 2500 ||
		*u.OldClusterDeletedMs != 4000 || u.NewCluster != "new" {
		t.Errorf("steps relative to the patch: %+v", u)
	}
}
