package cmd

import "github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"

func init() { extraCommands = append(extraCommands, doctor.NewCmd) }
