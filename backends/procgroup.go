package backends

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// reapBound is how long ralph keeps waiting for a group to vanish after
// SIGKILL. Only a process stuck in the kernel (uninterruptible sleep)
// outlives SIGKILL by more than a moment.
const reapBound = 5 * time.Second

// reapTick is how often a dying group is checked. There is no notification
// when processes that are not ralph's children exit, so this polls.
const reapTick = 10 * time.Millisecond

// procGroup signals and reaps the process group an agent leads. It is
// gentle first (SIGTERM) and firm once the grace has passed (SIGKILL).
type procGroup struct {
	pgid  int
	grace time.Duration

	mu     sync.Mutex
	termAt time.Time // when SIGTERM was sent; zero until then
	killed bool
}

// terminate sends SIGTERM to the group, once.
func (g *procGroup) terminate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.termAt.IsZero() {
		g.termAt = time.Now()
		g.signal(syscall.SIGTERM)
	}
}

// kill sends SIGKILL to the group, once.
func (g *procGroup) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.killed {
		g.killed = true
		g.signal(syscall.SIGKILL)
	}
}

// signal sends sig to every process in the group. ESRCH (nobody left) is
// what we want; EPERM cannot happen for our own children.
func (g *procGroup) signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
}

// stop terminates the group while its leader may still be running, and kills
// it when the grace passes, or force closes, before leaderDone closes. Once
// the leader has exited, ensureGone takes over.
func (g *procGroup) stop(leaderDone, force <-chan struct{}) {
	g.terminate()
	t := time.NewTimer(g.grace)
	defer t.Stop()
	select {
	case <-leaderDone:
	case <-t.C:
		g.kill()
	case <-force:
		g.kill()
	}
}

// alive reports whether any process of the group exists, zombies included.
func (g *procGroup) alive() bool {
	return !errors.Is(syscall.Kill(-g.pgid, 0), syscall.ESRCH)
}

// reap collects the exit status of group members that were reparented to
// ralph (see subreaper). It must only run once the leader has been waited
// for, so that it never steals the leader's status from exec.Cmd.Wait.
func (g *procGroup) reap() {
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

// ensureGone runs after the leader has exited and been waited for. Whatever
// is left in the group (the agent's background jobs, a grandchild that
// ignores SIGTERM) gets SIGTERM and, after the grace or once force closes,
// SIGKILL. It returns once kill(-pgid, 0) reports ESRCH, or an error if the
// group survives reapBound past SIGKILL.
func (g *procGroup) ensureGone(force <-chan struct{}) error {
	g.reap()
	if !g.alive() {
		return nil
	}
	g.terminate()
	g.mu.Lock()
	killAt := g.termAt.Add(g.grace)
	g.mu.Unlock()
	giveUpAt := killAt.Add(reapBound)

	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	for {
		g.reap()
		if !g.alive() {
			return nil
		}
		now := time.Now()
		if now.After(giveUpAt) {
			return fmt.Errorf("process group %d still alive %s after SIGKILL", g.pgid, reapBound)
		}
		if now.After(killAt) {
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
