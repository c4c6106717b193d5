package view

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/runfiles"
)

// A run's clock, read from its checkpoint, shows how long it has been at
// work, and depends on the checkpoint alone: a run that does not move
// reads the same at any time, so that a dashboard stream of an ended or a
// waiting run has nothing new to send.
func TestARunsClockIsItsCheckpoints(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return start.Add(time.Duration(sec) * time.Second) }
	for _, tc := range []struct {
		name    string
		st      runfiles.RunState
		running bool
		// elapsed is the run's time at work when read at 100s.
		elapsed time.Duration
		stopped time.Time
	}{
		{"running, on after a question", runfiles.RunState{SegmentStart: at(60), LastEventAt: at(90), PriorRuntime: 30 * time.Second},
			true, 70 * time.Second, time.Time{}},
		{"killed: up to its last line", runfiles.RunState{SegmentStart: at(60), LastEventAt: at(90), PriorRuntime: 30 * time.Second},
			false, 60 * time.Second, at(90)},
		{"killed before its segment's first line", runfiles.RunState{SegmentStart: at(60), LastEventAt: at(50), PriorRuntime: 30 * time.Second},
			false, 30 * time.Second, at(60)},
		{"ended", runfiles.RunState{LastEventAt: at(80), PriorRuntime: 80 * time.Second,
			Terminated: &runfiles.Termination{Reason: runfiles.ReasonCompleted, At: at(80)}}, false, 80 * time.Second, at(80)},
		{"waiting for a person's answer", runfiles.RunState{LastEventAt: at(45), PriorRuntime: 40 * time.Second,
			Question: &runfiles.Question{ID: "q1", AskedAt: at(40)}}, true, 40 * time.Second, at(40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runOf(&tc.st, runfiles.PhaseRunning, tc.running)
			assert.Equal(t, tc.elapsed, run.Elapsed(at(100)))
			assert.Equal(t, tc.stopped, run.Stopped)
			if !tc.stopped.IsZero() {
				assert.Equal(t, tc.elapsed, run.Elapsed(at(5000)), "a stopped clock stays stopped")
			}
			assert.Equal(t, run, runOf(&tc.st, runfiles.PhaseRunning, tc.running), "read again, the same")
		})
	}
}

// A run whose checkpoint says nothing of its time has no clock.
func TestARunWithoutTimesHasNoClock(t *testing.T) {
	run := runOf(&runfiles.RunState{}, runfiles.PhaseRunning, false)
	assert.True(t, run.Started.IsZero())
	assert.Zero(t, run.Elapsed(time.Now()))
}
