//go:build unix

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

// Group is the process group a started command leads. Its methods may be
// called from several goroutines.
type Group struct {
	cmd   *exec.Cmd
	pgid  int
	grace time.Duration

	mu       sync.Mutex
	termAt   time.Time // when SIGTERM was sent; zero until then
	killedAt time.Time // when SIGKILL was first sent; zero until then
	strays   strays    // the processes that carry its mark
}

// Start starts cmd as the leader of a new process group, keeping any other
// SysProcAttr settings, and returns the group. grace is the time the group
// gets between SIGTERM and SIGKILL. cmd's environment (cmd.Env, or ralph's
// when it is nil) gets a new Mark. On Linux it first makes the calling
// process a child subreaper (see the package documentation). The group id
// is cmd.Process.Pid.
func Start(cmd *exec.Cmd, grace time.Duration) (*Group, error) {
	return StartMarked(cmd, grace, NewMark())
}

// StartMarked is Start with the group's mark chosen by the caller, who
// records it first, so that what the group leaves behind can be stopped
// (StopMarked) even once the process that started it has died.
func StartMarked(cmd *exec.Cmd, grace time.Duration, m Mark) (*Group, error) {
	m.tag(cmd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0 // a group of its own, led by the command
	dieWithParent(cmd.SysProcAttr)
	adopts := becomeSubreaper()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Group{cmd: cmd, pgid: cmd.Process.Pid, grace: grace, strays: strays{mark: m, pgid: cmd.Process.Pid, adopts: adopts}}, nil
}

// Mark is the mark the group's processes carry.
func (g *Group) Mark() Mark { return g.strays.mark }

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
	return waitOrStop(ctx, g.cmd, func(done <-chan struct{}) { g.Stop(done, nil) })
}

// EnsureGone runs after the leader has exited and been waited for.
// Whatever is left in the group (background jobs, a grandchild that
// ignores SIGTERM), and whatever carries its mark outside it (a process
// that called setsid), gets SIGTERM, unless it had it already, and SIGKILL
// once the grace since the group's SIGTERM has passed or force closes.
// SIGKILL is repeated at every check from then on, so a member forked
// while it was delivered does not escape. EnsureGone returns nil once
// kill(-pgid, 0) reports ESRCH and no process carries the mark, or an error
// if either is still there reapBound after the first SIGKILL.
func (g *Group) EnsureGone(force <-chan struct{}) error {
	g.reap()
	if !g.alive() && g.straysGone() {
		return nil
	}
	g.terminate()

	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	seenGone := false
	for n := 1; ; n++ {
		g.reap()
		// The group is checked at every tick; the marked processes, whose
		// listing reads all of /proc, at the tick the group is first seen
		// gone and every strayScanEvery ticks.
		groupAlive := g.alive()
		if (!groupAlive && !seenGone) || n%strayScanEvery == 0 {
			seenGone = !groupAlive
			if gone := g.straysGone(); gone && !groupAlive {
				return nil
			}
			g.signalStrays()
		}
		now := time.Now()
		if killAt, killedAt := g.deadlines(); !killedAt.IsZero() {
			if now.Sub(killedAt) > reapBound {
				return g.stillAlive()
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

// strayScanEvery is how many checks of a dying group go by between two
// listings of the processes that carry its mark.
const strayScanEvery = 10

// stillAlive is EnsureGone's error for a group or marked processes that
// outlived SIGKILL.
func (g *Group) stillAlive() error {
	if g.alive() {
		return fmt.Errorf("process group %d still alive %s after SIGKILL", g.pgid, reapBound)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Errorf("processes %v, which left process group %d, still alive %s after SIGKILL", g.strays.pids(), g.pgid, reapBound)
}

// straysGone lists the processes that carry the group's mark now, and
// reports whether there are none left, nor any signalled left to reap.
func (g *Group) straysGone() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.strays.scan()
	return g.strays.gone()
}

// signalStrays sends the marked processes the last scan found what the
// group has been sent: SIGKILL once it has been, else SIGTERM once it has
// been.
func (g *Group) signalStrays() {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !g.killedAt.IsZero():
		g.strays.send(syscall.SIGKILL)
	case !g.termAt.IsZero():
		g.strays.send(syscall.SIGTERM)
	}
}

// terminate sends SIGTERM to the group, once: a second SIGTERM would cut
// short a cleanup that the first one started.
func (g *Group) terminate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.termAt.IsZero() {
		g.termAt = time.Now()
		g.strays.scan()
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

// signal sends sig to every process in the group, and to the marked
// processes outside it that the last scan found. ESRCH (nobody left) is
// the outcome wanted, and EPERM cannot happen for ralph's own children, so
// errors are ignored. The caller holds g.mu.
func (g *Group) signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
	g.strays.send(sig)
}

// alive reports whether any process of the group exists, zombies included.
func (g *Group) alive() bool {
	return !errors.Is(syscall.Kill(-g.pgid, 0), syscall.ESRCH)
}

// reap collects the exit status of group members, and of the marked
// processes signalled, that were reparented to ralph (see becomeSubreaper)
// and have exited, so they stop counting as alive. It must only run once
// the leader has been waited for, so that it never steals the leader's
// status from exec.Cmd.Wait.
func (g *Group) reap() {
	g.mu.Lock()
	g.strays.reap()
	g.mu.Unlock()
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
