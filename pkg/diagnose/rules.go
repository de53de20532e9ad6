package diagnose

// Rule IDs are stable: scripts, heal and docs/rules.md refer to them. Never rename one.
const (
	RuleHeadEvicted          = "head-evicted"
	RuleHeadTerminated       = "head-terminated"
	RuleHeadTerminatingStuck = "head-terminating-stuck"
	RuleHeadPending          = "head-pending"
	RuleHeadCrashLoop        = "head-crashloop"
	RuleHeadMissing          = "head-missing"
	RuleHeadDuplicate        = "head-duplicate"
	RuleStatusStale          = "status-stale"
	RuleNodePressure         = "node-pressure"
	RuleOperatorMissing      = "operator-missing"
	RuleOperatorOutdated     = "operator-outdated"
	RuleOperatorNewer        = "operator-newer"
	RuleWorkersNotReady      = "workers-not-ready"
	RuleServeHeadInService   = "serve-head-in-service"
	RuleServeHeadHasCPUs     = "serve-head-has-cpus"
	RuleGCSFTOff             = "gcs-ft-off"
)

// The rules about a document's text, which only doctor -f's reader sees (pkg/manifest).
const (
	RuleManifestUnknownField        = "manifest-unknown-field"
	RuleFieldDropped                = "field-dropped"
	RuleManifestStartParamNotString = "manifest-start-param-not-string"
)
