// Package procgroup runs a command as the leader of its own process group
// and makes sure that, when ralph is done with it, nothing of the group is
// left: not the command, and not what it started in the background.
//
// It owns five things:
//
//   - Starting a command in a new process group that it leads (Setpgid),
//     so that one signal to -pgid reaches everything it spawned ([Start]).
//   - Stopping that group gently, then firmly: SIGTERM to the whole group,
//     then SIGKILL once a grace period has passed, or at once when the
//     caller's force channel closes ([Group.Stop], [Group.Wait]).
//   - Waiting, after the leader has exited, until kill(-pgid, 0) reports
//     ESRCH, that is until no member is left, zombies included
//     ([Group.EnsureGone]).
//   - Not outliving ralph. On Linux the leader is started with a parent
//     death signal (SIGKILL), so a ralph killed outright takes the leader
//     with it, even one it was still forking: without it such a child
//     would run the agent unrecorded, beside the ralph that resumes.
//   - Reaping orphans. On Linux, [Start] makes ralph a child subreaper
//     (PR_SET_CHILD_SUBREAPER), so members orphaned by the leader's exit
//     are reparented to ralph rather than to PID 1, and ralph collects
//     their exit status itself. This is needed because in a container PID 1
//     is often a program that never reaps (or ralph itself under a shell
//     that does not): the dead members would stay zombies, and a zombie
//     still counts as a member, so the group would look alive forever.
//
// Whoever calls [Group.EnsureGone] must have waited for the leader first
// (exec.Cmd.Wait): reaping by group would otherwise steal the leader's exit
// status. The package is a leaf that imports nothing of ralph's; backends
// and criteria both run their processes through it. It is Unix-only, like
// the rest of ralph.
package procgroup

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// reapBound is how long EnsureGone keeps waiting for a group to vanish
// after SIGKILL. Only a process stuck in the kernel (uninterruptible sleep)
// outlives SIGKILL by more than a moment.
const reapBound = 5 * time.Second

// reapTick is how often a dying group is checked. Nothing notifies ralph
// when processes that are not its children exit, so this polls.
const reapTick = 10 * time.Millisecond

// Group is the process group a started command leads. Its methods may be
// called from several goroutines.
type Group struct {
	cmd   *exec.Cmd
	pgid  int
	grace time.Duration

	mu       sync.Mutex
	termAt   time.Time // when SIGTERM was sent; zero until then
	killedAt time.Time // when SIGKILL was first sent; zero until then
}

// Start starts cmd as the leader of a new process group, keeping any other
// SysProcAttr settings, and returns the group. grace is the time the group
// gets between SIGTERM and SIGKILL. On Linux it first makes the calling
// process a child subreaper (see the package documentation). The group id
// is cmd.Process.Pid.
func Start(cmd *exec.Cmd, grace time.Duration) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0 // a group of its own, led by the command
	dieWithParent(cmd.SysProcAttr)
	becomeSubreaper()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Group{cmd: cmd, pgid: cmd.Process.Pid, grace: grace}, nil
}

// Stop stops the group while its leader may still be running: SIGTERM to
// the whole group, then SIGKILL when the grace has passed or force closes,
// unless leaderDone closes first. It returns when leaderDone closes or
// SIGKILL has been sent; once the leader has been waited for, EnsureGone
// deals with what is left. A nil channel never closes.
func (g *Group) Stop(leaderDone, force <-chan struct{}) {
	g.terminate()
	killAt, _ := g.deadlines()
	t := time.NewTimer(time.Until(killAt))
	defer t.Stop()
	select {
	case <-leaderDone:
	case <-t.C:
		g.kill()
	case <-force:
		g.kill()
	}
}

// Wait waits for the leader to exit (exec.Cmd.Wait) and returns its error.
// If ctx ends first, the group is stopped as Stop does, and Wait still
// waits for the leader; stopped says so. It suits callers whose only
// reason to stop a command is ctx; call EnsureGone afterwards.
func (g *Group) Wait(ctx context.Context) (stopped bool, err error) {
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = g.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return false, waitErr
	case <-ctx.Done():
	}
	g.Stop(done, nil)
	<-done
	return true, waitErr
}

// EnsureGone runs after the leader has exited and been waited for.
// Whatever is left in the group (background jobs, a grandchild that
// ignores SIGTERM) gets SIGTERM, unless the group had it already, and
// SIGKILL once the grace since that SIGTERM has passed or force closes.
// SIGKILL is repeated at every check from then on, so a member forked
// while it was delivered does not escape. EnsureGone returns nil once
// kill(-pgid, 0) reports ESRCH, or an error if the group is still there
// reapBound after the first SIGKILL.
func (g *Group) EnsureGone(force <-chan struct{}) error {
	g.reap()
	if !g.alive() {
		return nil
	}
	g.terminate()

	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	for {
		g.reap()
		if !g.alive() {
			return nil
		}
		now := time.Now()
		if killAt, killedAt := g.deadlines(); !killedAt.IsZero() {
			if now.Sub(killedAt) > reapBound {
				return fmt.Errorf("process group %d still alive %s after SIGKILL", g.pgid, reapBound)
			}
			g.kill()
		} else if !now.Before(killAt) {
			g.kill()
		}
		select {
		case <-tick.C:
		case <-force:
			g.kill()
			force = nil // closed: do not spin on it
		}
	}
}

// terminate sends SIGTERM to the group, once: a second SIGTERM would cut
// short a cleanup that the first one started.
func (g *Group) terminate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.termAt.IsZero() {
		g.termAt = time.Now()
		g.signal(syscall.SIGTERM)
	}
}

// deadlines says when the grace after SIGTERM runs out, and when SIGKILL
// was first sent (zero if it was not).
func (g *Group) deadlines() (killAt, killedAt time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.termAt.Add(g.grace), g.killedAt
}

// kill sends SIGKILL to the group. It may be sent again; it only records
// when it was first sent.
func (g *Group) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killedAt.IsZero() {
		g.killedAt = time.Now()
	}
	g.signal(syscall.SIGKILL)
}

// signal sends sig to every process in the group. ESRCH (nobody left) is
// the outcome wanted, and EPERM cannot happen for ralph's own children, so
// errors are ignored.
func (g *Group) signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
}

// alive reports whether any process of the group exists, zombies included.
func (g *Group) alive() bool {
	return !errors.Is(syscall.Kill(-g.pgid, 0), syscall.ESRCH)
}

// reap collects the exit status of group members that were reparented to
// ralph (see becomeSubreaper) and have exited, so they stop counting as
// alive. It must only run once the leader has been waited for, so that it
// never steals the leader's status from exec.Cmd.Wait.
func (g *Group) reap() {
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
