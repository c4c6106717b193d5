package view

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
)

// stepClock is a clock that moves one millisecond each time it is read, so
// output with times is deterministic and still ordered.
func stepClock() func() time.Time {
	t := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// headlessLines checks the stream's contract (see CheckStream) and returns
// the event kinds in order.
func headlessLines(t *testing.T, stream string) []string {
	t.Helper()
	kinds, err := CheckStream(stream)
	require.NoError(t, err)
	return kinds
}

// headlessRun wires the views the way ralph run --headless does: the model,
// the stream on out, and on human the essentials, or with verbose every
// progress line. The model has a clock of its own, so the stream's times
// are the stream's clock's.
func headlessRun(out, human io.Writer, now func() time.Time, verbose bool) (Reporter, *Headless) {
	m := NewModel(stepClock())
	h := NewHeadless(out, m, now)
	var text Reporter = NewText(human, m, now, Options{Verbose: verbose})
	if !verbose {
		text = Essentials(text)
	}
	return Tee(m, h, text), h
}

func testIteration(n int, hat string) engine.IterationInfo {
	return engine.IterationInfo{N: n, Max: 10, Hat: hats.Hat{ID: hat}, Backend: "claude",
		Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

// TestHeadlessReporterGolden calls every reporter method once, in the order
// a run would, and compares the stream with the golden file.
func TestHeadlessReporterGolden(t *testing.T) {
	var out, human bytes.Buffer
	now := stepClock()
	r, h := headlessRun(&out, &human, now, false)
	h.Configured([]string{"ralph.yml: keys of ralph-orchestrator that ralph does not implement: core"}, 3)

	r.LoopStarted(engine.RunInfo{RunID: "20261122-100000-abcdef", Objective: "Add a --json flag", Source: "-p", Spec: "SPEC.md", Tasks: 3,
		Config: "ralph.yml", Hats: []string{"builder", "reviewer"}, EventsFile: ".ralph/events-20261122-100000.jsonl", MaxIter: 10})
	it := testIteration(1, "builder")
	r.IterationStarted(it)
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "Reading the code."})
	r.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolRead, ToolName: "Read", Path: "cmd/export.go"})
	r.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolWrite, ToolName: "Edit", Path: "cmd/export.go"})
	r.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolShell, ToolName: "Bash", Command: "go test ./... && echo <ok>"})
	r.Activity(it, events.Activity{Kind: events.ActivityTool, ToolName: "WebFetch"})
	r.Activity(it, events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 10}})
	r.Commit(it, engine.Commit{Hash: "0123456789abcdef0123456789abcdef01234567", Subject: "export: add --json"})
	r.TaskComplete(0, "Add the --json flag")
	it.Cost = runfiles.IterationCost{USD: 0.0123, Source: runfiles.CostReported, Model: "claude-opus-4-8"}
	r.IterationFinished(it, events.AgentResult{Duration: 12345 * time.Millisecond, CostUSD: 0.0123,
		Usage: events.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 5000},
		Tools: events.ToolCounts{Read: 1, Write: 1, Shell: 1, Other: 1}})
	r.EventAccepted(events.Event{Topic: "build.done", Payload: events.StringPayload("tests: pass"), Iteration: 1,
		Hat: "builder", Source: events.SourceAgent}, []string{"reviewer"}, "")
	r.EventRejected(events.Event{Topic: "deploy.now", Iteration: 1, Hat: "builder", Source: events.SourceTag},
		"scope_violation: hat builder may publish build.done only")
	asked := time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC)
	q := runfiles.Question{ID: "q-3fa9c1", Text: "Keep the v1 API?", Options: []string{"keep", "drop"}, Hat: "builder",
		Iteration: 1, AskedAt: asked, Deadline: asked.Add(30 * time.Minute)}
	r.WaitingForHuman(q)
	r.HumanAnswered(q, engine.Reply{Text: "drop it", By: "cli"})
	r.WaitingForHuman(runfiles.Question{ID: "q-77", Text: "Ship?", Hat: "builder", Iteration: 1, AskedAt: asked})
	r.HumanAnswered(runfiles.Question{ID: "q-77"}, engine.Reply{TimedOut: true})
	it2 := testIteration(2, "reviewer")
	it2.Confirming = true
	r.IterationStarted(it2)
	r.RateLimited(it2, 90*time.Second)
	it2.Cost = runfiles.IterationCost{Source: runfiles.CostUnknown, Model: "fake-model"}
	r.IterationFinished(it2, events.AgentResult{Duration: time.Second, Failure: events.FailureRateLimit,
		FailureMessage: "429 Too Many Requests", ExitCode: 1})
	r.Paced(runfiles.PacedRecord{Window: "tokens_per_hour", Used: 1200, Budget: 1000, Estimate: 600,
		Until: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC), WaitMS: 3540000})
	r.Warn("cannot keep the agent's raw output: disk full")
	r.Stuck(runfiles.Termination{Reason: runfiles.ReasonStuck, Message: "3 iterations checked no box"}, 3)
	r.LoopFinished(engine.Summary{RunID: "20261122-100000-abcdef", Reason: runfiles.ReasonStuck, ExitCode: 1,
		Message: "3 iterations in a row made no progress", Iterations: 2, Runtime: 75 * time.Second, Cost: runfiles.CostTotal{USD: 0.0123, Unknown: true},
		Usage: events.Usage{InputTokens: 1200, OutputTokens: 300}, Activations: map[string]int{"builder": 1, "reviewer": 1},
		Accepted: 1, Rejected: 1, EventsFile: ".ralph/events-20261122-100000.jsonl"})
	h.End(nil)

	headlessLines(t, out.String())
	golden.Assert(t, "testdata/headless/reporter.golden", out.String())
	assert.NotContains(t, human.String(), "Reading the code", "without --verbose, stderr gets no progress lines")
	assert.Contains(t, human.String(), "ralph: warning: cannot keep")
	assert.Contains(t, human.String(), `answer with: ralph answer q-3fa9c1 "TEXT"`, "a question is for whoever reads stderr")
	assert.Contains(t, human.String(), "ended: stuck (exit 1)")
	assert.Contains(t, human.String(), "(tokens_per_hour: 1200/1000); the next iteration waits", "a pacing wait is for whoever reads stderr")
	assert.Contains(t, human.String(), "ralph: 1 commit: 0123456789 export: add --json")
}

func TestHeadlessVerboseMirrorsProgressToStderr(t *testing.T) {
	var out, human bytes.Buffer
	now := stepClock()
	r, _ := headlessRun(&out, &human, now, true)
	it := testIteration(1, "builder")
	r.IterationStarted(it)
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "Reading the code."})
	assert.Contains(t, human.String(), "iteration 1/10: hat builder (claude)")
	assert.Contains(t, human.String(), "| Reading the code.")
	assert.NotContains(t, out.String(), "Reading the code", "agent text is not a headless event")
}

func TestHeadlessStuckFromTheEngine(t *testing.T) {
	var out bytes.Buffer
	now := stepClock()
	r, h := headlessRun(&out, &bytes.Buffer{}, now, false)
	h.Configured(nil, 4)
	r.LoopFinished(engine.Summary{Reason: runfiles.ReasonStuck, ExitCode: 1, Message: "4 iterations in a row made no progress"})
	assert.Equal(t, []string{"stuck", "ended"}, headlessLines(t, out.String()))
	assert.Contains(t, out.String(), `"reason":"4 iterations in a row made no progress","iterations_without_progress":4`)
}

func TestHeadlessCompleteCountsConfirmations(t *testing.T) {
	var out bytes.Buffer
	now := stepClock()
	r, _ := headlessRun(&out, &bytes.Buffer{}, now, false)
	r.LoopFinished(engine.Summary{Reason: runfiles.ReasonCompleted, Iterations: 2, Confirmations: 1})
	assert.Contains(t, out.String(), `"iterations":2,"confirmation_iterations":1,`)
}
