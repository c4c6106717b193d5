//go:build unix

package procgroup

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// StopMarked stops every process that carries m, wherever it is: SIGTERM,
// then SIGKILL once grace has passed with any left. It returns how many
// processes it found, and an error if some are still there reapBound after
// SIGKILL. It is how the processes of a group whose ralph died (and whose
// own group may be gone) are stopped: the mark was recorded when the group
// started. It does nothing for a mark that is not one NewMark makes (an
// empty one would match every process), and nothing where processes cannot
// be listed (Unix but not Linux).
func StopMarked(m Mark, grace time.Duration) (int, error) {
	if !m.valid() {
		return 0, nil
	}
	s := &strays{mark: m}
	found := s.scan()
	if len(found) == 0 {
		return 0, nil
	}
	seen := map[int]bool{}
	for _, pid := range found {
		seen[pid] = true
	}
	s.send(syscall.SIGTERM)
	killAt := time.Now().Add(grace)
	var killedAt time.Time
	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	for {
		s.reap()
		now := time.Now()
		if !killedAt.IsZero() && now.Sub(killedAt) > reapBound {
			return len(seen), fmt.Errorf("processes %v, marked %s, still alive %s after SIGKILL", s.pids(), m, reapBound)
		}
		pids := s.scan()
		if s.gone() {
			return len(seen), nil
		}
		for _, pid := range pids {
			seen[pid] = true
		}
		if !now.Before(killAt) {
			if killedAt.IsZero() {
				killedAt = now
			}
			s.send(syscall.SIGKILL)
		} else {
			s.send(syscall.SIGTERM)
		}
		<-tick.C
	}
}

// strays are the processes that carry a group's mark, wherever they are:
// those a signal to the group does not reach because they left it. Its
// methods are called under the group's lock, or by one goroutine.
type strays struct {
	mark Mark
	pgid int // the group's: its members are the group's to signal and reap
	// adopts says ralph is the subreaper of these processes: once their
	// parents are gone, they are ralph's to reap, dead or alive. Without
	// it, a dead stray (a zombie) that is not ralph's child is gone.
	adopts bool
	last   []int              // what the last scan found
	termed map[int]bool       // sent SIGTERM already: once is enough
	signal map[int]*signalled // signalled, and not yet seen gone
}

// signalled is a stray that was sent a signal, until it is gone.
type signalled struct {
	start string // its StartTime, which tells it from a later process of its pid
	child bool   // ralph's child (adopted) and alive, as reap last found it
}

// send sends sig to what the last scan found, SIGTERM once each, each
// through kill, which checks the mark again. SIGKILL also goes to the
// strays signalled before that ralph has adopted (see becomeSubreaper) and
// not reaped, whatever their environment says now (a process may rewrite
// it after the scan that found it): the pid of a child ralph has not
// reaped cannot be another process's. A stray that is not ralph's child is
// never signalled by pid alone, as its pid may be a stranger's by now.
func (s *strays) send(sig syscall.Signal) {
	if s.termed == nil {
		s.termed, s.signal = map[int]bool{}, map[int]*signalled{}
	}
	for _, pid := range s.last {
		if sig == syscall.SIGTERM && s.termed[pid] {
			continue
		}
		s.kill(pid, sig)
		s.termed[pid] = true
		if s.signal[pid] == nil {
			if start := StartTime(pid); start != "" {
				s.signal[pid] = &signalled{start: start}
			}
		}
	}
	if sig == syscall.SIGKILL {
		s.reap() // child is now true only of ralph's live children
		for pid, st := range s.signal {
			if st.child && !slices.Contains(s.last, pid) {
				_ = syscall.Kill(pid, sig)
			}
		}
	}
}

// reap collects the exit status of the strays that were signalled and are
// ralph's children now (the subreaper adopts them when their parent dies),
// so that none stays a zombie; and forgets those that no longer exist. A
// stray that still exists but is not ralph's child stays, until it is
// reaped here or vanishes: a zombie whose parent has not exited yet comes
// to ralph when it does, if ralph adopts it; else it is gone already. It
// waits for those pids alone, never for a group, so it may run while a
// leader is still to be waited for.
func (s *strays) reap() {
	for pid, st := range s.signal {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		switch {
		case got == pid:
			delete(s.signal, pid) // reaped
		case err == nil:
			st.child = true
		case errors.Is(err, syscall.ECHILD):
			st.child = false
			state, start := procStat(pid)
			if start != st.start || (state == "Z" && !s.adopts) {
				delete(s.signal, pid) // gone, or dead and another's to reap
			}
		}
	}
}

// gone reports whether the last scan found no stray and every stray
// signalled is gone.
func (s *strays) gone() bool { return len(s.last) == 0 && len(s.signal) == 0 }

// pids are the strays the last scan found and those signalled not yet
// gone, in order.
func (s *strays) pids() []int {
	pids := slices.Clone(s.last)
	for pid := range s.signal {
		if !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}
