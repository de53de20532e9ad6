// Package heal benchmarks `kubectl ray heal --watch` on sandboxes (test/sandbox): the watchdog's
// reaction time from an acknowledged eviction to its delete, over 100 evictions spread across
// 1,000 RayClusters, and the time from an eviction to a Running replacement head with heal and
// KubeRay v1.1.1 against KubeRay v1.5.0 alone. It lives behind the "bench" build tag so
// `go test ./...` never runs it; see docs/performance.md ("## Heal"):
//
//	go test -tags bench -run TestHealBench -v -timeout 30m ./bench/heal/
package heal
