package procgroup

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeJob records what a jobStop asks of a job, as Windows would be
// asked; terminating it empties it unless it is stuck.
type fakeJob struct {
	mu          sync.Mutex
	interrupts  int
	terminates  int
	procs       int
	noConsole   bool // interrupt fails, as for a ralph without a console
	stuck       bool // terminate leaves the processes running
	interrupted chan struct{}
	polls       chan struct{} // one per call of active, when not nil
}

func newFakeJob(procs int) *fakeJob {
	return &fakeJob{procs: procs, interrupted: make(chan struct{}, 10)}
}

func (f *fakeJob) interrupt() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noConsole {
		return errors.New("no console")
	}
	f.interrupts++
	f.interrupted <- struct{}{}
	return nil
}

func (f *fakeJob) terminate() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.terminates++
	if !f.stuck {
		f.procs = 0
	}
	return nil
}

func (f *fakeJob) active() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.polls != nil {
		select {
		case f.polls <- struct{}{}:
		default:
		}
	}
	return f.procs, nil
}

func (f *fakeJob) counts() (interrupts, terminates int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.interrupts, f.terminates
}

// A leader that exits within the grace after CTRL_BREAK_EVENT is not
// terminated.
func TestJobStopLeavesALeaderThatStopsWithinTheGrace(t *testing.T) {
	j := newFakeJob(1)
	s := &jobStop{job: j, grace: time.Hour, bound: time.Hour}
	leaderDone := make(chan struct{})
	go func() {
		<-j.interrupted
		close(leaderDone)
	}()
	s.stop(leaderDone, nil)
	interrupts, terminates := j.counts()
	assert.Equal(t, 1, interrupts)
	assert.Zero(t, terminates)
}

// The job is terminated once the grace has passed, or at once when force
// closes.
func TestJobStopTerminatesAfterTheGraceOrWhenForced(t *testing.T) {
	j := newFakeJob(1)
	s := &jobStop{job: j, grace: 0, bound: time.Hour}
	s.stop(nil, nil)
	interrupts, terminates := j.counts()
	assert.Equal(t, 1, interrupts, "gently first")
	assert.Equal(t, 1, terminates)

	j = newFakeJob(1)
	s = &jobStop{job: j, grace: time.Hour, bound: time.Hour}
	force := make(chan struct{})
	close(force)
	s.stop(nil, force)
	_, terminates = j.counts()
	assert.Equal(t, 1, terminates)
}

// Without a console to send CTRL_BREAK_EVENT through, there is no gentle
// stop to wait on: the job is terminated at once.
func TestJobStopWithoutAConsoleTerminatesAtOnce(t *testing.T) {
	j := newFakeJob(1)
	j.noConsole = true
	s := &jobStop{job: j, grace: time.Hour, bound: time.Hour}
	s.stop(nil, nil)
	_, terminates := j.counts()
	assert.Equal(t, 1, terminates)
}

// CTRL_BREAK_EVENT goes once: a second could cut short the cleanup the
// first started.
func TestJobStopInterruptsOnce(t *testing.T) {
	j := newFakeJob(1)
	s := &jobStop{job: j, grace: time.Hour, bound: time.Hour}
	done := make(chan struct{})
	close(done)
	s.stop(done, nil)
	s.stop(done, nil)
	interrupts, _ := j.counts()
	assert.Equal(t, 1, interrupts)
}

func TestJobEnsureGone(t *testing.T) {
	t.Run("an empty job is left alone", func(t *testing.T) {
		j := newFakeJob(0)
		s := &jobStop{job: j, grace: time.Hour, bound: time.Hour}
		require.NoError(t, s.ensureGone(nil))
		_, terminates := j.counts()
		assert.Zero(t, terminates)
	})
	t.Run("what a leader left is terminated at once when no stop was asked", func(t *testing.T) {
		j := newFakeJob(2)
		s := &jobStop{job: j, grace: time.Hour, bound: time.Hour}
		require.NoError(t, s.ensureGone(nil))
		interrupts, terminates := j.counts()
		assert.Zero(t, interrupts, "the group's root is gone: nothing to address a gentle stop to")
		assert.Equal(t, 1, terminates)
	})
	t.Run("within the grace of a stop, only force terminates", func(t *testing.T) {
		j := newFakeJob(2)
		j.polls = make(chan struct{})
		s := &jobStop{job: j, grace: time.Hour, bound: time.Hour}
		done := make(chan struct{})
		close(done)
		s.stop(done, nil) // interrupted; the leader exits at once
		force := make(chan struct{})
		gone := make(chan error, 1)
		go func() { gone <- s.ensureGone(force) }()
		<-j.polls
		<-j.polls // a second look: the first found processes and did not return
		select {
		case err := <-gone:
			t.Fatalf("returned within the grace, with processes left: %v", err)
		default:
		}
		close(force)
		require.NoError(t, <-gone)
		_, terminates := j.counts()
		assert.Positive(t, terminates)
	})
	t.Run("a job that outlives termination is an error", func(t *testing.T) {
		j := newFakeJob(1)
		j.stuck = true
		s := &jobStop{job: j, grace: 0, bound: 0}
		err := s.ensureGone(nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "1 processes of the job still running")
	})
}
