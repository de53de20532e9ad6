package diagnose

// riskRules are the rules about the spec whose findings are risks, not breakage: how the
// cluster was written makes an outage likelier (the head the kubelet evicts first, Serve traffic
// through the head), while nothing is broken now. doctor -f reports them (Options.SpecOnly); a
// live doctor only when asked (Options.Risks, --risks), so that a healthy cluster built from
// KubeRay's own samples, which carry most of them, stays silent.
var riskRules = map[string]bool{
	RuleHeadEvictableFirst:        true,
	RuleMemoryRequestNotLimit:     true,
	RuleImageRayVersion:           true,
	RuleServeHeadNotExcluded:      true,
	RuleShmSmallerThanObjectStore: true,
}

// IsRisk says whether rule is one of the risks a live doctor reports only with --risks.
func IsRisk(rule string) bool { return riskRules[rule] }

// withoutRisks drops the risks' findings, unless opts asks for them.
func withoutRisks(fs []Finding, opts Options) []Finding {
	if opts.Risks || opts.SpecOnly {
		return fs
	}
	kept := fs[:0]
	for _, f := range fs {
		if !riskRules[f.Rule] {
			kept = append(kept, f)
		}
	}
	return kept
}
