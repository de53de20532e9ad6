//go:build tools

// Package tools pins the operator's main package so `go mod tidy` records its dependencies.
package tools

import _ "github.com/ray-project/kuberay/ray-operator"
