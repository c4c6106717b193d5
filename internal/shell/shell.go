// Package shell finds the shell ralph runs the user's commands with:
// criteria and verify commands, hooks' run:, and tracker command sources
// all run as `sh -c <command>`, so a command means the same on every
// system. It is a leaf helper.
//
// On Unix sh is always there. Windows has none of its own; Git for
// Windows ships one, and ralph uses the sh on PATH, or else the one of the
// Git for Windows whose git is on PATH. When there is none,
// [Command] refuses before anything starts, with an error that names the
// feature and the fix, rather than running the command in cmd.exe, whose
// quoting, variables and exit statuses differ from what the config says.
package shell

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// NotFoundError is returned when no sh is on PATH. Feature names what
// wanted to run a command ("criterion tests_pass", "hook on loop.started").
type NotFoundError struct {
	Feature string
	GOOS    string
	Err     error // what the PATH lookup said
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: there is no sh on PATH to run its shell command with (%v): %s", e.Feature, e.Err, e.Hint())
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// Hint says how to get a shell on PATH.
func (e *NotFoundError) Hint() string {
	if e.GOOS == "windows" {
		return `install Git for Windows (https://gitforwindows.org) with git on PATH; ralph finds the sh.exe in its bin folder`
	}
	return "put the directory that holds sh (usually /bin) on PATH"
}

// Command returns a command that runs script with sh -c, or a
// *NotFoundError naming feature when there is no sh on PATH. The caller
// sets its directory, environment and streams, and starts it.
func Command(feature, script string) (*exec.Cmd, error) {
	sh, err := Path(feature)
	if err != nil {
		return nil, err
	}
	return exec.Command(sh, "-c", script), nil
}

// Path is the sh that Command runs, or a *NotFoundError naming feature. A
// caller that would otherwise stop half-way checks with it before it
// starts any work.
func Path(feature string) (string, error) {
	return Find(exec.LookPath, runtime.GOOS, feature)
}

// Find is the path of the sh that lookPath finds, for a system goos. It
// takes both as parameters so that what Windows does is tested anywhere.
func Find(lookPath func(string) (string, error), goos, feature string) (string, error) {
	path, err := lookPath("sh")
	if err == nil {
		return path, nil
	}
	if goos == "windows" {
		if sh, ok := besideGit(lookPath); ok {
			return sh, nil
		}
	}
	if errors.Is(err, exec.ErrDot) {
		// A sh.exe in the current directory, which PATH names only through
		// "." : Go refuses to run it, and so does ralph.
		err = fmt.Errorf("only in the current directory, which ralph does not run programs from: %w", err)
	}
	return "", &NotFoundError{Feature: feature, GOOS: goos, Err: err}
}

// besideGit is the sh.exe of the Git for Windows whose git is on PATH. Its
// default install puts only Git\cmd on PATH; its sh.exe is in Git\bin (and
// Git\usr\bin).
func besideGit(lookPath func(string) (string, error)) (string, bool) {
	git, err := lookPath("git")
	if err != nil {
		return "", false
	}
	root := filepath.Dir(filepath.Dir(git))
	for _, dir := range []string{filepath.Join(root, "bin"), filepath.Join(root, "usr", "bin")} {
		if sh, err := lookPath(filepath.Join(dir, "sh.exe")); err == nil {
			return sh, true
		}
	}
	return "", false
}
