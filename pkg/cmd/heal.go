package cmd

import "github.com/kubectl-ray/kubectl-ray/pkg/cmd/heal"

func init() { extraCommands = append(extraCommands, heal.NewCmd) }
