package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/shell"
)

// requireShell refuses a run whose config has shell commands when there
// is no sh to run them with (Windows without Git for Windows), before
// anything starts: a loop whose criteria can never run would only spend
// its agent's iterations, and an autopilot could not list its tasks.
func requireShell(cfg *config.Config) error {
	cmds := cfg.ShellCommands()
	if len(cmds) == 0 {
		return nil
	}
	_, err := shell.Path(cmds[0])
	var nf *shell.NotFoundError
	if !errors.As(err, &nf) {
		return err
	}
	return withHint(fmt.Errorf("the config has shell commands, which ralph runs with sh, and there is no sh on PATH (%w): %s",
		nf.Err, strings.Join(cmds, "; ")), nf.Hint())
}
