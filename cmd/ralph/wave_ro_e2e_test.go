package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/fakemodel"
	"github.com/ralph-loop/ralph/runfiles"
)

// roWaveReview is ralph-orchestrator's wave-review preset in its shape
// (testdata/ro-wave-review.yml): it loads with only its unimplemented key
// (core) reported, and runs as written.
func roWaveReview(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ro-wave-review.yml"))
	require.NoError(t, err)
	c, err := config.LoadBytes("ro-wave-review.yml", data)
	require.NoError(t, err)
	require.Len(t, c.Warnings, 1)
	assert.Contains(t, c.Warnings[0], "ignoring keys ralph does not implement: core (line 16)")
	list := c.HatList()
	require.Len(t, list, 3)
	assert.Equal(t, 3, list[1].Concurrency)
	assert.Equal(t, 600*time.Second, list[1].Timeout)
	require.NotNil(t, list[2].Aggregate)
	assert.Equal(t, []string{"Read", "Glob", "Grep", "Edit"}, c.Hats[2].DisallowedTools)
	assert.Equal(t, 300*time.Second, list[2].Aggregate.Timeout)
	return string(data)
}

// roBarrier is each reviewer's shell command: it waits for all three (so
// they must run at once) and publishes its finding.
func roBarrier(dir string) string {
	return fmt.Sprintf(`touch %[1]s/started-$RALPH_WAVE_INDEX; while [ "$(ls %[1]s | grep -c '^started-')" -lt 3 ]; do sleep 0.05; done; "$RALPH_BIN" emit review.done "finding $RALPH_WAVE_INDEX"`, dir)
}

func TestE2EWaveOrchestratorPresetRuns(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	// The scripted agent runs on the command backend, which has no deny
	// list, so ralph refuses disallowed_tools there: that one line is left
	// out here, and the run through claude below keeps it.
	deny := `    disallowed_tools: ["Read", "Glob", "Grep", "Edit"]` + "\n"
	fixture := roWaveReview(t)
	require.Contains(t, fixture, deny)
	w.write("ralph.yml", strings.Replace(fixture, deny, "", 1))
	w.write("PROMPT.md", "Review the authentication module.\n")
	w.write("agent.yml", agentCLI())
	barrier := t.TempDir()
	w.script(agentScript{ByHat: map[string][]step{
		"coordinator": {{Sh: `"$RALPH_BIN" wave emit review.perspective --payloads "ROLE: security" "ROLE: errors" "ROLE: docs"`}},
		"reviewer":    {{Sh: roBarrier(barrier)}},
		"synthesizer": {say("Report: three findings. " + tag("review.complete", "report with 3 findings"))},
		"ralph":       {say("Checked the report. " + tag("review.complete", "confirmed"))},
	}})
	r := w.ralph("loop", "-c", "ralph.yml", "-c", "agent.yml")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"finding 0", "finding 1", "finding 2"}, reviewFindings(w))
	assert.Equal(t, "1", w.stateText("hat-synthesizer.count"))
}

// The same preset through the real claude CLI, against the scripted fake
// model: the coordinator's agent starts the wave from its shell tool,
// three claude processes review at once, the synthesizer completes.
func TestE2EAgentWaveOrchestratorPreset(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	bin := agentBinary(t, dir, "claude")
	barrier := t.TempDir()
	// The model's answers are taken in order, whoever asks. The barrier
	// keeps the three reviewers' first requests (their shell calls) ahead
	// of their second ones (their closing texts), so each gets one of each.
	turns := []fakemodel.Turn{
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{
			Command: `"$RALPH_BIN" wave emit review.perspective --payloads "ROLE: security" "ROLE: errors" "ROLE: docs"`}}}},
		{Text: "Three reviewers dispatched."},
	}
	for range 3 {
		turns = append(turns, fakemodel.Turn{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: roBarrier(barrier)}}}})
	}
	for range 3 {
		turns = append(turns, fakemodel.Turn{Text: "Finding published."})
	}
	turns = append(turns,
		fakemodel.Turn{Text: "Report: three findings. " + tag("review.complete", "report with 3 findings")},
		fakemodel.Turn{Text: "The report covers every angle. " + tag("review.complete", "confirmed")})
	srv := fakemodel.New(fakemodel.Script{Turns: turns})
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	w := newWorkspace(t)
	w.write("ralph.yml", roWaveReview(t))
	w.write("PROMPT.md", "Review the authentication module.\n")
	w.write("agent.yml", fmt.Sprintf("cli:\n  backend: claude\n  command: %s\n", bin))
	r := w.ralphAgent("claude", url, "loop", "-c", "ralph.yml", "-c", "agent.yml")
	t.Logf("claude: exit %d in %s", r.code, r.elapsed.Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, []string{"finding 0", "finding 1", "finding 2"}, reviewFindings(w))
	assert.Equal(t, len(turns), srv.TurnsUsed(), "script turns consumed")
	denied := map[string][]string{}
	for _, rec := range w.events() {
		if rec.Err == nil && rec.Event.Topic == runfiles.TopicIterationStarted {
			var st runfiles.IterationStartedRecord
			runfiles.Decode(rec.Event, &st)
			denied[st.Hat] = st.DisallowedTools
		}
	}
	assert.Equal(t, []string{"Read", "Glob", "Grep", "Edit"}, denied["synthesizer"], "the synthesizer's claude denies the tools the preset names")
	for _, req := range srv.Requests() {
		assert.False(t, req.Exhausted, "request %d got past the end of the script", req.Seq)
	}
}

// reviewFindings are the review.done payloads in the log, in order, each
// checked to come from the worker its wave index names.
func reviewFindings(w *workspace) []string {
	w.t.Helper()
	var out []string
	for _, r := range w.events() {
		if r.Err != nil || r.Event.Topic != "review.done" {
			continue
		}
		require.NotNil(w.t, r.Event.Wave)
		require.True(w.t, strings.HasSuffix(r.Event.PayloadText(), fmt.Sprint(r.Event.WaveIndex)))
		out = append(out, r.Event.PayloadText())
	}
	return out
}
