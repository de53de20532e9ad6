// Package tools records the dependencies of the three control-plane commands and the kubelet
// (the sandbox's real node) so that `go mod tidy` writes every go.sum entry their builds need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
