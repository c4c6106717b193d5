package criteria

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// reapBound is how long a check keeps waiting for its group to vanish after
// SIGKILL. Only a process stuck in the kernel outlives SIGKILL by more than
// a moment.
const reapBound = 5 * time.Second

// reapTick is how often a dying group is checked: nothing notifies ralph
// when processes that are not its children exit.
const reapTick = 10 * time.Millisecond

// procGroup is the process group a check's command leads.
type procGroup struct{ pgid int }

// waitLeader waits for the command (the group leader) to exit. If ctx ends
// first, the group gets SIGTERM, then SIGKILL after killGrace; stopped says
// so. waitErr is cmd.Wait's.
func (g procGroup) waitLeader(ctx context.Context, cmd *exec.Cmd) (stopped bool, waitErr error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
	}
	g.signal(syscall.SIGTERM)
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return true, err
	case <-t.C:
	}
	g.signal(syscall.SIGKILL)
	return true, <-done
}

// ensureGone runs once the leader has been waited for. What is left of the
// group gets SIGTERM and, after killGrace, SIGKILL; it returns when
// kill(-pgid, 0) reports nobody left, or an error if the group outlives
// SIGKILL by reapBound.
func (g procGroup) ensureGone() error {
	g.reap()
	if !g.alive() {
		return nil
	}
	g.signal(syscall.SIGTERM)
	killAt := time.Now().Add(killGrace)
	giveUpAt := killAt.Add(reapBound)
	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	for range tick.C {
		g.reap()
		if !g.alive() {
			return nil
		}
		now := time.Now()
		if now.After(giveUpAt) {
			return fmt.Errorf("process group %d still alive %s after SIGKILL", g.pgid, reapBound)
		}
		if now.After(killAt) {
			g.signal(syscall.SIGKILL)
		}
	}
	return nil
}

// signal sends sig to the whole group. ESRCH (nobody left) is the outcome
// wanted, so errors are ignored.
func (g procGroup) signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
}

// alive reports whether any process of the group exists, zombies included.
func (g procGroup) alive() bool {
	return !errors.Is(syscall.Kill(-g.pgid, 0), syscall.ESRCH)
}

// reap collects group members reparented to ralph (see becomeSubreaper)
// that have exited, so they stop counting as alive. It must run only after
// the leader was waited for, so it never steals the leader's status from
// exec.Cmd.Wait.
func (g procGroup) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-g.pgid, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
