package cmd

import "github.com/kubectl-ray/kubectl-ray/pkg/cmd/chaos"

func init() { extraCommands = append(extraCommands, chaos.NewCmd) }
