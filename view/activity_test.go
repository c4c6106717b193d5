package view

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestActivityLogRecordsWhatTheAgentsDo feeds the activity log a run's
// reports and compares the file with the golden one; a WorkspaceReader
// reads the same records back.
func TestActivityLogRecordsWhatTheAgentsDo(t *testing.T) {
	dir := t.TempDir()
	var warnings []string
	l := NewActivityLog(dir, stepClock(), func(w string) { warnings = append(warnings, w) })
	r := Tee(l)
	r.LoopStarted(engine.RunInfo{RunID: "run-1", MaxIter: 5})
	it := testIteration(1, "builder")
	r.IterationStarted(it)
	r.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolShell, ToolName: "Bash", Command: "go test ./..."})
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "All green.\nCommitting."})
	r.Activity(it, events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 1500, OutputTokens: 10}, CostUSD: 0.5})
	r.Activity(it, events.Activity{Kind: events.ActivityRateLimit, Text: "429", ResetAt: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)})
	r.LoopFinished(engine.Summary{RunID: "run-1"})
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "after the end: not recorded"})

	data, err := os.ReadFile(runfiles.In(dir).Activity("run-1"))
	require.NoError(t, err)
	golden.Assert(t, "testdata/activity.golden", string(data))
	assert.Empty(t, warnings)

	acts := NewWorkspaceReader(dir, nil).activity(runfiles.In(dir).Activity("run-1"))
	var lines []string
	for _, a := range acts.records {
		lines = append(lines, ActivityLines(a)...)
	}
	assert.Equal(t, []string{"shell go test ./...", "| All green.", "| Committing.", "rate limited: 429"}, lines)
	assert.Equal(t, Figures{Usage: events.Usage{InputTokens: 1500, OutputTokens: 10}, CostUSD: 0.5,
		Tools: events.ToolCounts{Shell: 1}}, acts.iterations[1])
}

// TestActivityLogWarnsOnceAndGoesOn: a run whose activity cannot be
// written goes on, and says so once.
func TestActivityLogWarnsOnceAndGoesOn(t *testing.T) {
	dir := t.TempDir()
	// A file where the run's directory would be.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".ralph", "runs"), nil, 0o644))
	var warnings []string
	l := NewActivityLog(dir, stepClock(), func(w string) { warnings = append(warnings, w) })
	l.LoopStarted(engine.RunInfo{RunID: "run-1"})
	l.Activity(testIteration(1, "builder"), events.Activity{Kind: events.ActivityText, Text: "hi"})
	l.LoopStarted(engine.RunInfo{RunID: "run-1"})
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "the agents' activity is not recorded for ralph watch")
}
