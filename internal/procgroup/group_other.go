//go:build !unix && !windows

package procgroup

import (
	"context"
	"os/exec"
	"time"
)

// Group is, where there are neither process groups nor job objects
// (plan9, wasip1), the command alone: a stop kills it (there is no gentle
// signal to send first), and what it started is not reached.
type Group struct {
	cmd  *exec.Cmd
	mark Mark
}

// Start starts cmd; grace is not used.
func Start(cmd *exec.Cmd, grace time.Duration) (*Group, error) {
	return StartMarked(cmd, grace, NewMark())
}

// StartMarked is Start with the mark chosen by the caller, which cmd's
// environment carries as on Unix.
func StartMarked(cmd *exec.Cmd, _ time.Duration, m Mark) (*Group, error) {
	m.tag(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Group{cmd: cmd, mark: m}, nil
}

// Mark is the mark the command carries.
func (g *Group) Mark() Mark { return g.mark }

// Stop kills the command, unless leaderDone closes first.
func (g *Group) Stop(leaderDone, _ <-chan struct{}) {
	select {
	case <-leaderDone:
	default:
		_ = g.cmd.Process.Kill()
	}
}

// Wait waits for the command to exit and returns its error; if ctx ends
// first, the command is killed, and stopped says so.
func (g *Group) Wait(ctx context.Context) (stopped bool, err error) {
	return waitOrStop(ctx, g.cmd, func(done <-chan struct{}) { g.Stop(done, nil) })
}

// EnsureGone has nothing to wait for: the command has exited, and what it
// started cannot be found.
func (g *Group) EnsureGone(<-chan struct{}) error { return nil }

// StopMarked finds nothing to stop where processes cannot be listed with
// their environments.
func StopMarked(Mark, time.Duration) (int, error) { return 0, nil }
