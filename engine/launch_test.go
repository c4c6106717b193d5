package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// The command line's choices survive in the log: loop.started records
// them, a resume records what it changed, and PreviousLaunch reads back the
// latest without touching the workspace.
func TestLaunchIsRecordedAndReadBack(t *testing.T) {
	dir := t.TempDir()
	l, err := runfiles.PreviousLaunch(dir)
	require.NoError(t, err)
	assert.Nil(t, l, "no run yet")

	s := settings()
	s.MaxIterations = 1
	threshold := 2
	started := &runfiles.Launch{Mode: runfiles.ModeSpec, SpecFile: "TODO.md", Configs: []string{"agent.yml"}, MaxIterations: 1, StuckThreshold: &threshold}
	_, err = newTestEngine(t, dir, happy(), s, func(o *Options) { o.Launch = started }).Run(t.Context())
	require.NoError(t, err)
	l, err = runfiles.PreviousLaunch(dir)
	require.NoError(t, err)
	assert.Equal(t, started, l)

	s.MaxIterations = 5
	resumed := *started
	resumed.MaxIterations = 5
	_, err = newTestEngine(t, dir, happy(), s, func(o *Options) { o.Launch, o.Start = &resumed, runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	l, err = runfiles.PreviousLaunch(dir)
	require.NoError(t, err)
	assert.Equal(t, &resumed, l)
}

// A run that ends on a limit carries what to raise it to, so that the
// command line can say how a resume does not end again at once for the
// same reason; its message says what happened and names no command.
func TestLimitEndingsSayHowToGoOn(t *testing.T) {
	noProgress := &fakeBackend{turns: []turn{{text: "thinking"}}}
	costly := &fakeBackend{turns: []turn{{text: tagged("build.task", "go"), result: events.AgentResult{CostUSD: 0.6}}}}
	cases := []struct {
		name     string
		backend  *fakeBackend
		settings func(*Settings)
		want     string
		goOn     runfiles.GoOn
	}{
		{"max iterations", happy(), func(s *Settings) { s.MaxIterations = 2 },
			"reached max_iterations (2)", runfiles.GoOn{Mode: runfiles.ModeLoop, Raise: "4"}},
		{"max iterations in SPEC mode", &fakeBackend{turns: []turn{{text: "thinking"}}}, func(s *Settings) {
			s.SpecFile, s.MaxIterations = "SPEC.md", 1
		}, "reached max_iterations (1)", runfiles.GoOn{Mode: runfiles.ModeSpec, Raise: "2"}},
		{"stuck", noProgress, func(s *Settings) { s.StuckThreshold = 3 },
			"hats tried: ralph ×3", runfiles.GoOn{Mode: runfiles.ModeLoop, Raise: "6"}},
		{"max cost", costly, func(s *Settings) { s.MaxCostUSD = 1 },
			"spent $1.2000 of max_cost_usd $1.00", runfiles.GoOn{Mode: runfiles.ModeLoop}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := settings()
			tc.settings(&s)
			if s.SpecFile != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, s.SpecFile), []byte("- [ ] one\n"), 0o644))
			}
			out, err := newTestEngine(t, dir, tc.backend, s).Run(t.Context())
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(out.Message, tc.want), "%q ends with %q", out.Message, tc.want)
			assert.NotContains(t, out.Message, "--", "no command in the message")
			require.NotNil(t, out.GoOn)
			assert.Equal(t, tc.goOn, *out.GoOn)
			assert.True(t, out.Reason.SaysHowToGoOn())

			var rec runfiles.TerminateRecord
			for _, r := range readLog(t, dir) {
				if r.Err == nil && r.Event.Topic == runfiles.TopicLoopTerminate {
					require.True(t, runfiles.Decode(r.Event, &rec))
				}
			}
			assert.Equal(t, out.GoOn, rec.GoOn, "loop.terminate records it")
		})
	}
}

func TestMaxRuntimeEndingNamesTheFlag(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	s := settings()
	s.MaxRuntime = 150 * time.Second
	out, err := newTestEngine(t, t.TempDir(), &fakeBackend{turns: []turn{{onStart: clock.advance}}}, s,
		func(o *Options) { o.Now = clock.Now }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "reached max_runtime_seconds (2m30s)", out.Message)
	assert.Equal(t, &runfiles.GoOn{Mode: runfiles.ModeLoop, Raise: "5m"}, out.GoOn)
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		8 * time.Hour: "8h", 90 * time.Minute: "1h30m", 5 * time.Minute: "5m", 90 * time.Second: "1m30s",
		2 * time.Second: "2s", 1500 * time.Millisecond: "2s", 10 * time.Millisecond: "1s",
		time.Hour + time.Second: "1h0m1s",
	} {
		assert.Equal(t, want, shortDuration(d), "%s", d)
	}
}

// A resume after a failure ending starts that count afresh — the user fixed
// the cause — while the counts behind limits stay for the raised limit to
// judge.
func TestResumeForgivesTheFailuresThatEndedTheRun(t *testing.T) {
	for _, reason := range []runfiles.Reason{runfiles.ReasonConsecutiveFailures, runfiles.ReasonLoopThrashing, runfiles.ReasonValidationFailure, runfiles.ReasonStuck} {
		t.Run(string(reason), func(t *testing.T) {
			st := runfiles.NewRunState()
			st.ConsecutiveFailures, st.ConsecutiveMalformed, st.NoProgress = 5, 3, 4
			st.Blocked["build.blocked: x"] = 3
			st.Apply(record(runfiles.TopicLoopTerminate, runfiles.TerminateRecord{Reason: reason, ExitCode: reason.ExitCode()}), twoHats(t))
			st.Apply(record(runfiles.TopicLoopResumed, runfiles.LoopResumedRecord{Iteration: 4}), twoHats(t))

			assert.Nil(t, st.Terminated)
			assert.Equal(t, reason == runfiles.ReasonConsecutiveFailures, st.ConsecutiveFailures == 0, "consecutive failures")
			assert.Equal(t, reason == runfiles.ReasonLoopThrashing, len(st.Blocked) == 0, "blocked counts")
			assert.Equal(t, reason == runfiles.ReasonValidationFailure, st.ConsecutiveMalformed == 0, "malformed lines")
			assert.Equal(t, 4, st.NoProgress, "stuck is a limit: --stuck-threshold raises it")
		})
	}
}

func record(topic string, payload any) events.Record {
	ev := runfiles.RalphEvent(topic, payload)
	ev.TS = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return events.Record{Event: ev}
}
