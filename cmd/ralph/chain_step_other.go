//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd) {}

func signalOf(*os.ProcessState) (int, bool) { return 0, false }
