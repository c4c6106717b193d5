//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

func confineLandlock(Agent, rules, *exec.Cmd) error {
	return errors.New("sandbox: Landlock is Linux's")
}

func launch([]string) {
	fmt.Fprintln(os.Stderr, "ralph: sandbox: Landlock is Linux's")
	os.Exit(126)
}
