package diagnose

// RuleInfo describes one rule for reports and docs: junit writes one testcase per rule, and
// docs/rules.md must list every rule here (a test checks it).
type RuleInfo struct {
	ID       string
	Severity Severity
	// Scope: "cluster" (every RayCluster), "rayservice" (clusters a RayService owns) or
	// "operator" (once per report).
	Scope string
	// Needs is the optional resource the rule reads; when it is in Snapshot.Blind the rule did not run.
	Needs string
}

// Catalog is every rule, in the order reports list them.
var Catalog = []RuleInfo{
	{RuleHeadEvicted, SeverityError, "cluster", ""},
	{RuleHeadTerminated, SeverityError, "cluster", ""},
	{RuleHeadTerminatingStuck, SeverityError, "cluster", ""},
	{RuleHeadPending, SeverityError, "cluster", ""},
	{RuleHeadCrashLoop, SeverityError, "cluster", ""},
	{RuleHeadMissing, SeverityError, "cluster", ""},
	{RuleHeadDuplicate, SeverityError, "cluster", ""},
	{RuleStatusStale, SeverityWarning, "cluster", ""},
	{RuleNodePressure, SeverityWarning, "cluster", "nodes"},
	{RuleWorkersNotReady, SeverityWarning, "cluster", ""},
	{RuleServeHeadInService, SeverityWarning, "rayservice", "services"},
	{RuleServeHeadHasCPUs, SeverityWarning, "rayservice", ""},
	{RuleGCSFTOff, SeverityInfo, "rayservice", ""},
	{RuleOperatorMissing, SeverityWarning, "operator", "deployments"},
	{RuleOperatorOutdated, SeverityWarning, "operator", "deployments"},
	{RuleRayServiceUpgradeStuck, SeverityWarning, "rayservice", ""},
	{RuleServeNoEndpoints, SeverityError, "rayservice", "endpointslices"},
	{RuleGCSFTFinalizerStuck, SeverityError, "cluster", ""},
}
