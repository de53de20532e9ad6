// Package manifest benchmarks `kubectl ray doctor -f FILE --offline` (the real binary, built as
// released) on 1,000 RayCluster documents, against the floor of decoding the same documents
// alone (sigs.k8s.io/yaml into KubeRay's types) in one process, both measured in one run. Behind
// the "bench" build tag, so `go test ./...` never runs it; see docs/performance.md:
//
//	go test -tags bench -run TestDoctorFiles -v ./bench/manifest/
package manifest
