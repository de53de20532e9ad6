//go:build tools

// Package tools pins kwok's main package so `go mod tidy` records its dependencies.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
