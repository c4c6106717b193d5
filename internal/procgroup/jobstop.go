package procgroup

import (
	"fmt"
	"sync"
	"time"
)

// job is what a Windows job object does for a Group: the order in which
// a group is stopped lives in jobStop, apart from the system calls, so
// that it is tested where there are no job objects.
type job interface {
	// interrupt asks the group gently to stop (CTRL_BREAK_EVENT to its
	// console process group); an error means it could not be asked.
	interrupt() error
	// terminate kills every process in the job (TerminateJobObject).
	terminate() error
	// active is how many processes are still in the job.
	active() (int, error)
}

// jobStop stops a job gently, then firmly: interrupt, then terminate once
// the grace has passed or force closes. Its methods may be called from
// several goroutines.
type jobStop struct {
	job   job
	grace time.Duration
	bound time.Duration // reapBound, shorter in tests

	mu         sync.Mutex
	askedAt    time.Time // when interrupt was sent; zero until then
	terminated time.Time // when terminate was first called; zero until then
}

// stop is Group.Stop: it returns when leaderDone closes or the job has
// been terminated. A group that cannot be interrupted (no console shared
// with ralph) is terminated at once: there is nothing to give a grace to.
func (s *jobStop) stop(leaderDone, force <-chan struct{}) {
	if !s.interrupt() {
		s.terminate()
		return
	}
	t := time.NewTimer(time.Until(s.killAt()))
	defer t.Stop()
	select {
	case <-leaderDone:
	case <-t.C:
		s.terminate()
	case <-force:
		s.terminate()
	}
}

// ensureGone is Group.EnsureGone, once the leader has been waited for.
// What is left in the job is terminated when the grace since the
// interrupt has passed, at once when none was sent (the leader, the
// group's root, is gone, and with it the one id a gentle stop is
// addressed to) or force closes; it returns nil once the job is empty,
// and an error if it is not s.bound after it was terminated.
func (s *jobStop) ensureGone(force <-chan struct{}) error {
	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	for {
		n, err := s.job.active()
		if err != nil {
			return fmt.Errorf("count the processes left in the job: %w", err)
		}
		if n == 0 {
			return nil
		}
		now := time.Now()
		askedAt, terminated := s.times()
		switch {
		case !terminated.IsZero() && now.Sub(terminated) > s.bound:
			return fmt.Errorf("%d processes of the job still running %s after it was terminated", n, s.bound)
		case askedAt.IsZero() || !now.Before(askedAt.Add(s.grace)):
			s.terminate()
		}
		select {
		case <-tick.C:
		case <-force:
			s.terminate()
			force = nil // closed: do not spin on it
		}
	}
}

// interrupt sends the gentle stop once, and reports whether it was sent
// (now or before).
func (s *jobStop) interrupt() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.askedAt.IsZero() {
		return true
	}
	if err := s.job.interrupt(); err != nil {
		return false
	}
	s.askedAt = time.Now()
	return true
}

// terminate kills the job; it may be called again (a process the job
// started meanwhile), and records when it was first called.
func (s *jobStop) terminate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terminated.IsZero() {
		s.terminated = time.Now()
	}
	_ = s.job.terminate() // fails only for a job already gone
}

func (s *jobStop) killAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.askedAt.Add(s.grace)
}

func (s *jobStop) times() (askedAt, terminated time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.askedAt, s.terminated
}
