package main

// TestPacingWaitsAcrossAKillAndResume: with event_loop.tokens_per_hour,
// an iteration that leaves no room in the hour for the next makes the
// loop wait (loop.paced) instead of ending; killed with SIGKILL during the
// wait and resumed within the window, ralph waits again, for the same
// moment, since the window is folded from the log; then it goes on. The
// agent is the scripted one printing Claude Code's stream, whose result
// reports the iteration's tokens. The first ralph waits on the real clock
// (the test kills it once the log says it waits); the resumed one on a
// clock whose sleeps jump (RALPH_TEST_CLOCK_JUMP), so its hour passes at
// once and the log shows when the next iteration began.

import (
	"fmt"
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

const pacingConfig = `event_loop:
  prompt: Write hello.txt, then have it reviewed.
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 4
  max_consecutive_failures: 1
  tokens_per_hour: 1000
hats:
  builder:
    name: Builder
    triggers: [task.start]
    publishes: [build.done]
    instructions: Write hello.txt and publish build.done.
  reviewer:
    name: Reviewer
    triggers: [build.done]
    publishes: [LOOP_COMPLETE]
    instructions: Check hello.txt.
cli:
  backend: claude
  command: %s
`

// claudeStream writes a Claude Code stream whose result says text and
// used tokens input tokens, and returns its path.
func (w *workspace) claudeStream(name, text string, tokens int) string {
	w.t.Helper()
	result := string(events.StringPayload(text))
	stream := `{"type":"system","subtype":"init","cwd":"/workspace","session_id":"5b0c2a4e-0000-4000-8000-0000000000a1","tools":["Write"],"mcp_servers":[],"model":"claude-opus-4-8","permissionMode":"bypassPermissions","apiKeySource":"none"}` + "\n" +
		fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"num_turns":1,"result":%s,"session_id":"5b0c2a4e-0000-4000-8000-0000000000a1","total_cost_usd":0.01,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`, result, tokens) + "\n"
	path := filepath.Join(w.state, name)
	require.NoError(w.t, os.WriteFile(path, []byte(stream), 0o644))
	return path
}

func TestPacingWaitsAcrossAKillAndResume(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", fmt.Sprintf(pacingConfig, agentBin))
	w.script(agentScript{ByHat: map[string][]step{
		"builder": {{Write: map[string]string{"hello.txt": "hello\n"},
			PrintFile: w.claudeStream("builder.jsonl", "Written. "+tag("build.done", "hello.txt written"), 600)}},
		"reviewer": {{PrintFile: w.claudeStream("reviewer.jsonl", "Right. "+tag("LOOP_COMPLETE", "hello.txt reviewed"), 600)}},
	}})

	cmd, stderr := w.startRalph("loop")
	var first runfiles.PacedRecord
	waitFor(t, "the first ralph to wait for the tokens_per_hour budget", func() bool {
		p := pacedLines(w)
		if len(p) > 0 {
			first = p[0]
		}
		return len(p) > 0
	})
	assert.Equal(t, "tokens_per_hour", first.Window)
	assert.InDelta(t, 600, first.Used, 0)
	assert.InDelta(t, 1000, first.Budget, 0)
	assert.InDelta(t, 600, first.Estimate, 0)
	assert.WithinDuration(t, time.Now().Add(time.Hour), first.Until, 2*time.Minute, "an hour after the builder's iteration")
	assert.Equal(t, 1, w.agentRuns(), "the reviewer waits")

	// ralph status reads the wait from the run's files.
	status := w.ralph("status")
	require.Equal(t, 0, status.code, status.stderr)
	assert.Contains(t, status.stdout, "paced until "+first.Until.Local().Format("15:04")+" (tokens_per_hour: 600/1000)")
	// The line on stderr follows the log's, from the same process.
	waitFor(t, "ralph to say it waits", func() bool {
		return strings.Contains(stderr.String(), "(tokens_per_hour: 600/1000); the next iteration waits")
	})

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	// Resumed seconds later, well inside the hour: the same wait again,
	// before any agent runs; the jumping clock lets it pass.
	r := w.ralphEnv([]string{clockJumpEnv + "=0s"}, "loop", "--resume")
	require.Equal(t, 0, r.code, "exit code; stderr:\n%s", r.stderr)
	assert.Equal(t, 2, w.agentRuns())

	recs := w.events()
	var afterResume []string
	resumed := false
	for _, rec := range recs {
		if rec.Err != nil || rec.Event.Source != events.SourceRalph {
			continue
		}
		resumed = resumed || rec.Event.Topic == runfiles.TopicLoopResumed
		if resumed && (rec.Event.Topic == runfiles.TopicLoopPaced || rec.Event.Topic == runfiles.TopicIterationStarted) {
			afterResume = append(afterResume, rec.Event.Topic)
		}
	}
	assert.Equal(t, []string{runfiles.TopicLoopPaced, runfiles.TopicIterationStarted}, afterResume,
		"the resumed run waits before its next iteration")
	paced := pacedLines(w)
	require.Len(t, paced, 2)
	assert.Equal(t, first.Until, paced[1].Until, "the window folded from the log ends when it did")
	started := startedIterations(t, recs)
	require.Len(t, started, 2)
	assert.False(t, started[1].ts.Before(first.Until), "the reviewer started at %s, before the wait's end %s", started[1].ts, first.Until)
	assert.Equal(t, "hello\n", w.read("hello.txt"))
	assert.Equal(t, "terminate completed", last(w.flow()))
}

// pacedLines are the loop.paced lines of the current run's log.
func pacedLines(w *workspace) []runfiles.PacedRecord {
	rel, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "current-events"))
	if err != nil {
		return nil
	}
	recs, err := events.NewReader(filepath.Join(w.dir, strings.TrimSpace(string(rel))), 0).Read()
	if err != nil {
		return nil
	}
	var out []runfiles.PacedRecord
	for _, rec := range recs {
		if rec.Err == nil && rec.Event.Topic == runfiles.TopicLoopPaced && rec.Event.Source == events.SourceRalph {
			var p runfiles.PacedRecord
			runfiles.Decode(rec.Event, &p)
			out = append(out, p)
		}
	}
	return out
}
