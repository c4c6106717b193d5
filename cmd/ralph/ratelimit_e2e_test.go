package main

// TestE2ERateLimit: an agent whose first iteration reports a usage limit in
// its CLI's own output format is waited for, not counted as a failure, and
// its iteration is repeated. The real CLIs retry HTTP 429 by themselves, so
// the limit is driven through the output format: the scripted agent
// (internal/scriptagent) replays a canned stream from testdata/ratelimit/
// with {{now+N}} expanded to a reset time N seconds ahead, and ralph reads
// it with the real backend's parser (cli.backend claude or gemini, with
// cli.command pointing at the scripted agent).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// rateLimitConfig has one hat that completes in one go. A single failure
// ends the run (exit 1), so a rate limit counted as a failure cannot pass.
const rateLimitConfig = `event_loop:
  prompt: Write hello.txt.
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 3
  max_consecutive_failures: 1
  rate_limit_max_wait_seconds: %d
hats:
  builder:
    name: Builder
    triggers: [task.start]
    publishes: [LOOP_COMPLETE]
    instructions: Write hello.txt, then complete.
cli:
  backend: %s
  command: %s
`

type rateLimitCase struct {
	backend string
	limited string // the canned stream of the limited iteration
	exit    int    // what the CLI exits with then
	done    string // the canned stream of the repeated iteration
	// reset replaces the limited stream's {{now+3}}, to move the reset time.
	reset   string
	maxWait int              // event_loop.rate_limit_max_wait_seconds
	wait    [2]time.Duration // the bounds of the wait ralph must announce
}

func TestE2ERateLimit(t *testing.T) {
	t.Parallel()
	cases := map[string]rateLimitCase{
		// Claude Code's rejected rate_limit_event carries resetsAt in Unix
		// seconds, 3 s ahead (2-3 s once truncated); ralph waits until then
		// plus a second.
		"claude rate_limit_event rejected": {
			backend: "claude", limited: "claude-rejected.jsonl", exit: 1, done: "claude-done.jsonl",
			maxWait: 60, wait: [2]time.Duration{2 * time.Second, 4500 * time.Millisecond},
		},
		// Gemini CLI's quota error says how long to wait in words. It
		// exits with the HTTP status modulo 256 (429 → 173).
		"gemini quota will reset after 3s": {
			backend: "gemini", limited: "gemini-quota.jsonl", exit: 173, done: "gemini-done.jsonl",
			maxWait: 60, wait: [2]time.Duration{3 * time.Second, 4500 * time.Millisecond},
		},
		// A reset an hour ahead is waited for only up to
		// rate_limit_max_wait_seconds, then the iteration is tried again.
		"claude reset beyond rate_limit_max_wait_seconds": {
			backend: "claude", limited: "claude-rejected.jsonl", exit: 1, done: "claude-done.jsonl",
			reset: "{{now+3600}}", maxWait: 2, wait: [2]time.Duration{2 * time.Second, 2 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testRateLimit(t, tc)
		})
	}
}

func testRateLimit(t *testing.T, tc rateLimitCase) {
	w := newWorkspace(t)
	w.write("ralph.yml", fmt.Sprintf(rateLimitConfig, tc.maxWait, tc.backend, agentBin))
	limited := w.cannedStream(tc.limited, tc.reset)
	w.script(agentScript{ByHat: map[string][]step{"builder": {
		{PrintFile: limited, Exit: tc.exit},
		{Write: map[string]string{"hello.txt": "hello\n"}, PrintFile: w.cannedStream(tc.done, "")},
	}}})

	start := time.Now()
	r := w.ralph("loop")
	elapsed := time.Since(start)

	require.Equal(t, 0, r.code, "exit code; stderr:\n%s", r.stderr)
	assert.Equal(t, "hello\n", w.read("hello.txt"))
	assert.Equal(t, []string{
		"ralph task.start",
		"ralph agent.rate_limited", "finished builder rate_limited",
		"tag LOOP_COMPLETE", "finished builder success",
		"terminate completed",
	}, w.flow())
	recs := w.events()

	limit := rateLimitedPayload(t, recs)
	assert.Equal(t, 1, limit.Iteration)
	assert.Equal(t, "builder", limit.Hat)
	assert.Contains(t, limit.Message, "limit")
	assert.NotEmpty(t, limit.ResetAt, "the provider's reset time is recorded")
	wait := time.Duration(limit.WaitMS) * time.Millisecond
	assert.GreaterOrEqual(t, wait, tc.wait[0], "announced wait")
	assert.LessOrEqual(t, wait, tc.wait[1], "announced wait")

	started := startedIterations(t, recs)
	require.Len(t, started, 2, "the limited iteration and its repetition")
	for _, s := range started {
		assert.Equal(t, 1, s.Iteration, "the repetition keeps the iteration number")
		assert.Equal(t, "builder", s.Hat, "the repetition keeps the hat")
	}
	waited := started[1].ts.Sub(finishedAt(t, recs, "rate_limited"))
	assert.GreaterOrEqual(t, waited, wait-100*time.Millisecond, "ralph waited as long as it said")
	assert.Less(t, elapsed, wait+30*time.Second)

	for _, f := range w.finishedIterations() {
		if f.Outcome == "success" {
			assert.Equal(t, events.Usage{InputTokens: 2100, OutputTokens: 12}, f.Tokens, "the repeated iteration's tokens")
		}
	}
	assert.NotContains(t, r.stderr, "consecutive_failures")
	assert.Equal(t, 2, w.agentRuns(), "the agent ran twice")
}

// cannedStream copies a testdata/ratelimit stream into the test's state
// folder, with {{now+3}} replaced by reset when it is set, and returns its
// path for the scripted agent's print_file.
func (w *workspace) cannedStream(name, reset string) string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ratelimit", name))
	require.NoError(w.t, err)
	text := string(data)
	if reset != "" {
		require.Contains(w.t, text, "{{now+3}}")
		text = strings.ReplaceAll(text, "{{now+3}}", reset)
	}
	path := filepath.Join(w.state, name)
	require.NoError(w.t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

type rateLimited struct {
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	Message   string `json:"message"`
	ResetAt   string `json:"reset_at"`
	WaitMS    int64  `json:"wait_ms"`
}

func rateLimitedPayload(t *testing.T, recs []events.Record) rateLimited {
	t.Helper()
	for _, rec := range recs {
		if rec.Err == nil && rec.Event.Topic == "agent.rate_limited" {
			var p rateLimited
			require.NoError(t, json.Unmarshal(rec.Event.Payload, &p))
			return p
		}
	}
	t.Fatal("no agent.rate_limited line in the log")
	return rateLimited{}
}

type startedIteration struct {
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	ts        time.Time
}

func startedIterations(t *testing.T, recs []events.Record) []startedIteration {
	t.Helper()
	var out []startedIteration
	for _, rec := range recs {
		if rec.Err != nil || rec.Event.Topic != "iteration.started" {
			continue
		}
		var s startedIteration
		require.NoError(t, json.Unmarshal(rec.Event.Payload, &s))
		s.ts = rec.Event.TS
		out = append(out, s)
	}
	return out
}

// finishedAt is when the first iteration with outcome finished.
func finishedAt(t *testing.T, recs []events.Record, outcome string) time.Time {
	t.Helper()
	for _, rec := range recs {
		if rec.Err != nil || rec.Event.Topic != "iteration.finished" {
			continue
		}
		var f finishedIteration
		require.NoError(t, json.Unmarshal(rec.Event.Payload, &f))
		if f.Outcome == outcome {
			return rec.Event.TS
		}
	}
	t.Fatalf("no iteration.finished with outcome %s", outcome)
	return time.Time{}
}
