// Package doctor benchmarks `kubectl ray doctor -A -o json` (the real binary) against a bare paged
// client-go LIST of the same pods and RayClusters, on a sandbox filled with 1,000 RayClusters and
// 5,000 pods. The test lives behind the "bench" build tag so `go test ./...` never runs it; see
// docs/performance.md:
//
//	go test -tags bench -run TestDoctorAtScale -v -timeout 40m ./bench/doctor/
package doctor
