package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/shell"
)

// waitDelay bounds how long a finished command's leftover children may hold
// its output open.
const waitDelay = 5 * time.Second

// stderrLines is how many of a failed command's last stderr lines its error
// quotes.
const stderrLines = 5

// runError is a command that ran and failed.
type runError struct {
	cmdline string
	status  int
	stderr  string
}

func (e *runError) Error() string {
	msg := fmt.Sprintf("%s exited with status %d", e.cmdline, e.status)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

// runTool runs a tracker's program with args directly (no shell) in dir
// and returns its standard output.
func runTool(ctx context.Context, dir, tool string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(tool)
	if err != nil {
		return nil, fmt.Errorf("%s not found on PATH: install it, or choose another autopilot.source", tool)
	}
	return runCmd(ctx, cmdline(tool, args), func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Dir = dir
		return cmd
	})
}

// runShell runs a command source's shell command with sh -c (internal/shell) in dir, with
// env added to ralph's environment.
func runShell(ctx context.Context, dir, script string, env ...string) ([]byte, error) {
	sh, err := shell.Path("autopilot.source command")
	if err != nil {
		return nil, err
	}
	return runCmd(ctx, "sh -c "+strconv.Quote(script), func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, sh, "-c", script)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), env...)
		return cmd
	})
}

// runCmd runs the command newCmd makes and returns its standard output.
func runCmd(ctx context.Context, line string, newCmd func() *exec.Cmd) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	// A Ctrl-C meant for ralph must not kill a tracker half-way through a
	// write: ralph stops it through ctx when it means to.
	err := procgroup.RunDetached(func() *exec.Cmd {
		stdout.Reset()
		stderr.Reset()
		cmd := newCmd()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = waitDelay
		return cmd
	})
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", line, ctx.Err())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.Bytes(), &runError{cmdline: line, status: exit.ExitCode(), stderr: lastLines(stderr.String(), stderrLines)}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", line, err)
	}
	return stdout.Bytes(), nil
}

// cmdline shows a command as one would type it.
func cmdline(tool string, args []string) string {
	parts := []string{tool}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// lastLines is the last n non-empty lines of s, joined with "; ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// stderrSays reports whether err is a failed command whose stderr contains
// any of the phrases (case-insensitive).
func stderrSays(err error, phrases ...string) bool {
	var re *runError
	if !errors.As(err, &re) {
		return false
	}
	low := strings.ToLower(re.stderr)
	for _, p := range phrases {
		if strings.Contains(low, p) {
			return true
		}
	}
	return false
}
