package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// fileVerifier passes a criterion when the file its Path names exists in
// the workspace; any other type fails.
func fileVerifier(ctx context.Context, ws string, specs []criteria.Spec, _ criteria.Env) []criteria.Result {
	out := make([]criteria.Result, len(specs))
	for i, s := range specs {
		_, err := os.Stat(filepath.Join(ws, s.Path))
		out[i] = criteria.Result{Spec: s, Name: s.Type + " " + s.Path, Passed: err == nil}
		if err != nil {
			out[i].Evidence = s.Path + " does not exist"
		}
	}
	return out
}

func withVerifier(o *Options) { o.Verify = fileVerifier }

// writes is a turn that creates a file in the workspace when it runs.
func writes(dir, name string, t turn) turn {
	t.onStart = func() { _ = os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644) }
	return t
}

func TestAcceptanceCriteriaGateCompletion(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.Confirmations = 2 // criteria replace the confirmation iteration
	s.AcceptanceCriteria = []criteria.Spec{{Type: "file_exists", Path: "hello.txt"}}
	b := &fakeBackend{byHat: map[string][]turn{"ralph": {
		{text: tagged("LOOP_COMPLETE", "done, trust me")},
		writes(dir, "hello.txt", turn{text: tagged("LOOP_COMPLETE", "done for real")}),
	}}}
	out, err := newTestEngine(t, dir, b, s, withVerifier).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, 2, out.Iterations, "no confirmation iteration: ralph's check is the second confirmation")
	recs := readLog(t, dir)
	assert.Equal(t, 1, countTopic(recs, runfiles.TopicCompletionRejected))
	assert.Contains(t, b.prompts[1], "file_exists hello.txt", "the next prompt shows what failed")
	assert.Contains(t, b.prompts[1], "hello.txt does not exist")
}

func TestGateBlocksUntilCriteriaPass(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.Gates = []Gate{{Topic: "build.done", Criteria: []criteria.Spec{{Type: "file_exists", Path: "tests.ok"}}}}
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build")}},
		"builder":  {{emit: []events.Event{ev("build.done", "tests: pass")}}, writes(dir, "tests.ok", turn{emit: []events.Event{ev("build.done", "fixed")}})},
		"reviewer": {{text: tagged("LOOP_COMPLETE", "ok")}},
	}}
	out, err := newTestEngine(t, dir, b, s, withVerifier).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	// The blocked event goes back to the builder, who sees the evidence.
	assert.Equal(t, []string{"ralph", "builder", "builder", "reviewer"}, b.hats)
	assert.Contains(t, b.prompts[2], "build.done.blocked")
	assert.Contains(t, b.prompts[2], "tests.ok does not exist")
	assert.Equal(t, 1, countTopic(readLog(t, dir), "event.rejected", "build.done"))
}

func TestGateEvidenceText(t *testing.T) {
	s := settings()
	s.Gates = []Gate{{Topic: "build.done", Evidence: []string{"tests: pass", "lint: pass"}}}
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build")}},
		"builder":  {{emit: []events.Event{ev("build.done", "tests: pass")}}, {emit: []events.Event{ev("build.done", "tests: pass\nlint: pass")}}},
		"reviewer": {{text: tagged("LOOP_COMPLETE", "ok")}},
	}}
	out, err := newTestEngine(t, t.TempDir(), b, s).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "builder", "reviewer"}, b.hats)
	assert.Contains(t, b.prompts[2], `must contain "lint: pass"`)
}

func TestBaselineIgnoreLetsPreExistingFailuresPass(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.AcceptanceCriteria = []criteria.Spec{
		{Type: "file_exists", Path: "legacy.ok", Baseline: "ignore"}, // fails before and after
		{Type: "file_exists", Path: "new.ok"},
	}
	b := &fakeBackend{turns: []turn{writes(dir, "new.ok", turn{text: tagged("LOOP_COMPLETE", "done")})}}
	out, err := newTestEngine(t, dir, b, s, withVerifier).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, 1, countTopic(readLog(t, dir), runfiles.TopicCriteriaBaseline))
	assert.Equal(t, "the completion topic LOOP_COMPLETE was accepted; still failing, as before the run (baseline: ignore): file_exists legacy.ok",
		out.Message, "the summary does not hide what still fails")
}

func TestBaselineWithoutIgnoreStillBlocks(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.MaxIterations = 2
	s.AcceptanceCriteria = []criteria.Spec{{Type: "file_exists", Path: "legacy.ok"}}
	b := &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}}}
	out, err := newTestEngine(t, dir, b, s, withVerifier).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonMaxIterations, out.Reason)
}

func TestStuckAfterIterationsWithoutProgress(t *testing.T) {
	s := settings()
	s.StuckThreshold = 3
	b := &fakeBackend{turns: []turn{{text: "Thinking about it."}}}
	out, err := newTestEngine(t, t.TempDir(), b, s).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonStuck, out.Reason)
	assert.Equal(t, exitcode.Failure, out.ExitCode)
	assert.Equal(t, 3, out.Iterations)
	assert.Contains(t, out.Message, "hats tried: ralph ×3", "the same hat is counted, not repeated")
}

func TestVerifyEveryIterationCompletesWithoutAClaim(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.VerifyEveryIteration = true
	s.AcceptanceCriteria = []criteria.Spec{{Type: "file_exists", Path: "hello.txt"}}
	b := &fakeBackend{turns: []turn{{text: "Working."}, writes(dir, "hello.txt", turn{text: "Created it."})}}
	out, err := newTestEngine(t, dir, b, s, withVerifier).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, 2, out.Iterations)
}

func TestDefaultPublishPassesTheGateToo(t *testing.T) {
	reg, err := hats.NewRegistry([]hats.Hat{
		{ID: "builder", Triggers: []string{"task.start", "build.done.blocked"}, DefaultPublishes: "build.done"},
	})
	require.NoError(t, err)
	s := settings()
	s.MaxIterations = 4
	s.Gates = []Gate{{Topic: "build.done", Criteria: []criteria.Spec{{Type: "file_exists", Path: "tests.ok"}}}}
	b := &fakeBackend{turns: []turn{{text: "did nothing"}}}
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, b, s, withVerifier, func(o *Options) { o.Hats = reg }).Run(t.Context())
	require.NoError(t, err)
	// The same block three times in a row is thrashing.
	assert.Equal(t, runfiles.ReasonLoopThrashing, out.Reason, "a default never slips past a failing gate")
	recs := readLog(t, dir)
	assert.Zero(t, countTopic(recs, "build.done"))
	assert.Equal(t, 3, countTopic(recs, "build.done.blocked"))
}

func TestSpecMode(t *testing.T) {
	spec := "# Spec\n- [ ] one\n- [ ] two\n- [ ] three\n"
	check := func(dir string, box string) func() {
		return func() {
			path := filepath.Join(dir, "SPEC.md")
			data, _ := os.ReadFile(path)
			_ = os.WriteFile(path, []byte(strings.Replace(string(data), "- [ ] "+box, "- [x] "+box, 1)), 0o644)
		}
	}
	t.Run("a box an iteration until all are checked", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte(spec), 0o644))
		s := settings()
		s.SpecFile, s.StuckThreshold, s.MaxIterations = "SPEC.md", 3, 10
		b := &fakeBackend{turns: []turn{{onStart: check(dir, "one")}, {onStart: check(dir, "two")}, {onStart: check(dir, "three")}}}
		out, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
		assert.Equal(t, 3, out.Iterations)
		assert.Equal(t, 3, countTopic(readLog(t, dir), runfiles.TopicTaskComplete))
	})
	t.Run("a claim with open boxes is rejected", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte(spec), 0o644))
		s := settings()
		s.SpecFile, s.MaxIterations = "SPEC.md", 2
		b := &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "all done")}}}
		out, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonMaxIterations, out.Reason)
		assert.Contains(t, b.prompts[1], "3 of 3 boxes of SPEC.md are still open")
	})
	t.Run("one open box is one", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte(spec), 0o644))
		s := settings()
		s.SpecFile, s.MaxIterations = "SPEC.md", 2
		b := &fakeBackend{turns: []turn{{onStart: func() { check(dir, "one")(); check(dir, "two")() },
			text: tagged("LOOP_COMPLETE", "all done")}}}
		_, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Contains(t, b.prompts[1], "1 of 3 boxes of SPEC.md is still open")
	})
	t.Run("no box checked is stuck", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte(spec), 0o644))
		s := settings()
		s.SpecFile, s.StuckThreshold, s.MaxIterations = "SPEC.md", 3, 10
		b := &fakeBackend{turns: []turn{{emit: []events.Event{ev("note", "busy")}}}}
		out, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonStuck, out.Reason, "an accepted event is no progress in SPEC mode")
		assert.Equal(t, 3, out.Iterations)
	})
}
