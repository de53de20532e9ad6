// Package probe benchmarks pkg/chaos/probe against vegeta on one loopback target. The test lives
// behind the "bench" build tag so `go test ./...` never runs it; see docs/performance.md:
//
//	go test -tags bench -run TestProbeVsVegeta -v -timeout 30m ./bench/probe/
package probe
