//go:build bench

package redact

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A Ray log of the kind a bundle keeps (the GCS's and raylets' lines, node ids, resources, an
// occasional line with a keyword), 8 MiB. The figures in docs/performance.md ("The redactor")
// come from:
//
//	go test -tags bench -run xxx -bench . -benchtime 5x ./pkg/redact/
func rayLog() string {
	var b strings.Builder
	for i := 0; b.Len() < 8<<20; i++ {
		switch i % 50 {
		case 0:
			fmt.Fprintf(&b, "[2026-12-06 10:%02d:00,123 I 123 456] gcs_server.cc:%d: Registering actor with key %08x token id %d\n", i%60, i%900, i, i)
		case 1:
			fmt.Fprintf(&b, "[2026-12-06 10:%02d:00,124 W 123 456] runtime_env_agent.py:%d: pip install --index-url https://pypi.internal/simple torch==2.%d\n", i%60, i%900, i%9)
		default:
			fmt.Fprintf(&b, "[2026-12-06 10:%02d:00,125 I 123 456] node_manager.cc:%d: Node 7f3a9c0e1b2d%08x registered with resources CPU=4 memory=8589934592 worker pid=%d\n", i%60, i%900, i, i)
		}
	}
	return b.String()
}

// BenchmarkShapesOnly is the redactor's own shapes, without gitleaks' rules.
func BenchmarkShapesOnly(b *testing.B) {
	s := rayLog()
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = replaceSpans(s, shapeSpans(s))
	}
}

// BenchmarkString is the whole text pass: known values, shapes and gitleaks' rules.
func BenchmarkString(b *testing.B) {
	s := rayLog()
	r := New(Set{"kn0wnS3cretVal": {}})
	loadDetector()
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = r.String(s)
	}
}

// BenchmarkGitleaksWhole is gitleaks run as its library runs by default, on the whole text at
// once, with no keyword prefilter of ours: what the prefilter saves.
func BenchmarkGitleaksWhole(b *testing.B) {
	s := rayLog()
	d := loadDetector()
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = d.gitleaks.DetectString(s)
	}
}

// BenchmarkLoad is loading gitleaks' default rule set (once per process).
func BenchmarkLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		detectorOnce = sync.Once{}
		loadDetector()
	}
}
