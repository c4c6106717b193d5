package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// headlessLines checks the stream's contract (see CheckStream: each line
// one the schema, docs/headless.schema.json, describes) and returns the
// event kinds in order.
func headlessLines(t *testing.T, stream string) []string {
	t.Helper()
	kinds, err := view.CheckStream(stream)
	require.NoError(t, err)
	return kinds
}

// TestHeadlessEnd covers how a stream ends: one complete or failed line,
// whatever mix of summary and error the loop command has.
func TestHeadlessEnd(t *testing.T) {
	t.Parallel()
	fatal := engine.Summary{RunID: "r1", Reason: runfiles.ReasonFatal, ExitCode: 3, Message: "claude: not logged in", Iterations: 1}
	done := engine.Summary{RunID: "r1", Reason: runfiles.ReasonCompleted, ExitCode: 0, Iterations: 4}
	cases := []struct {
		name    string
		summary *engine.Summary
		err     error
		want    string // the last line's event
		fields  map[string]any
	}{
		{"completed", &done, exitError{code: 0}, "complete", map[string]any{"reason": "completed", "exit_code": 0.0}},
		{"a config error before the loop", nil, withHint(errors.New("ralph.yml:3: unknown key"), "did you mean hats?"),
			"failed", map[string]any{"error": "ralph.yml:3: unknown key", "hint": "did you mean hats?", "exit_code": 3.0}},
		{"a fatal end with the engine's error", &fatal, errors.New("claude: not logged in; run claude /login"),
			"failed", map[string]any{"error": "claude: not logged in; run claude /login", "exit_code": 3.0}},
		{"a fatal end without an error of its own", &fatal, exitError{code: 3},
			"failed", map[string]any{"error": "claude: not logged in", "exit_code": 3.0}},
		{"an error that carries its code", nil, &hint.Error{Err: errors.New("lock held"), Code: 3}, "failed", map[string]any{"exit_code": 3.0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			m := view.NewModel(time.Now)
			h := view.NewHeadless(&out, m, time.Now)
			r := view.Tee(m, h)
			closeWith := func(err error) { h.End(failureOf(err)) }
			if tc.summary != nil {
				r.LoopFinished(*tc.summary)
			}
			closeWith(tc.err)
			closeWith(tc.err) // a second Close adds nothing
			kinds := headlessLines(t, out.String())
			require.Equal(t, tc.want, kinds[len(kinds)-1])
			var last map[string]any
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
			for k, v := range tc.fields {
				assert.Equal(t, v, last[k], k)
			}
			if tc.summary != nil && tc.want == "failed" {
				assert.NotNil(t, last["run"], "a run that had started reports its figures")
			}
		})
	}
}

// normalizeHeadless replaces what differs between runs: times, durations,
// run ids, log names and the workspace path.
func normalizeHeadless(stream, workspace string) string {
	for _, r := range []struct{ re, with string }{
		{`"(ts|timestamp)":"[^"]*"`, `"$1":"TS"`},
		{`"(total_)?duration_ms":\d+`, `"${1}duration_ms":0`},
		{`\d{8}-\d{6}-[0-9a-f]{6}`, "RUN-ID"},
		{`events-\d{8}-\d{6}(-\d+)?\.jsonl`, "events-TIME.jsonl"},
		// A prompt names the ralph binary, whose path is the test's.
		{`"prompt_bytes":\d+,"prompt_sha256":"[0-9a-f]{64}"`, `"prompt_bytes":N,"prompt_sha256":"SHA256"`},
	} {
		stream = regexp.MustCompile(r.re).ReplaceAllString(stream, r.with)
	}
	return strings.ReplaceAll(stream, workspace, "$WORK")
}

// claudeTurn is what a scripted agent prints to pass for Claude Code: the
// tool uses, a text line, and the result (with <event> tags, tokens and
// cost) in stream-json.
type claudeTurn struct {
	tools  []claudeToolUse
	text   string
	result string
	in     int64
	out    int64
	cost   float64
}

type claudeToolUse struct {
	name  string
	input map[string]string
}

func (c claudeTurn) String() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i, tu := range c.tools {
		_ = enc.Encode(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{
			"id": fmt.Sprintf("msg_%d", i), "content": []any{map[string]any{"type": "tool_use", "name": tu.name, "input": tu.input}}}})
	}
	if c.text != "" {
		_ = enc.Encode(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{
			"id": "msg_text", "content": []any{map[string]any{"type": "text", "text": c.text}}}})
	}
	_ = enc.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": c.result,
		"total_cost_usd": c.cost, "usage": map[string]any{"input_tokens": c.in, "output_tokens": c.out}})
	return strings.TrimSuffix(b.String(), "\n")
}

// claudeCLI is the cli: section that runs the scripted agent as if it were
// Claude Code, so its stream-json is parsed into tools, tokens and cost.
func claudeCLI() string {
	return fmt.Sprintf("cli:\n  backend: claude\n  command: %s\n", agentBin)
}

const headlessConfig = `event_loop:
  prompt: Create hello.txt and have it reviewed.
  max_iterations: 10
  completion_confirmations: 1
  enforce_hat_scope: true
  checkpoint_interval: 5
hats:
  builder:
    name: Builder
    triggers: [build.task]
    publishes: [build.done]
    instructions: Build it.
  reviewer:
    name: Reviewer
    triggers: [build.done]
    publishes: [review.approved]
    instructions: Review it.
`

// headlessScript: the coordinator hands out the task; the builder reads,
// writes and tests, and emits build.done; the reviewer approves and also
// tries a topic outside its scope (rejected); the coordinator completes.
func headlessScript() agentScript {
	builder := claudeTurn{
		tools: []claudeToolUse{
			{"Read", map[string]string{"file_path": "README.md"}},
			{"Write", map[string]string{"file_path": "hello.txt"}},
			{"Bash", map[string]string{"command": "cat hello.txt"}},
		},
		text: "Wrote hello.txt.", result: "Wrote hello.txt.", in: 1200, out: 300, cost: 0.0123,
	}
	return agentScript{ByHat: map[string][]step{
		"ralph": {
			{WhenFile: map[string]string{"hello.txt": "hello"},
				Say:  claudeTurn{result: "Verified. " + tag("LOOP_COMPLETE", "hello.txt exists and was reviewed"), in: 400, out: 50, cost: 0.002}.String(),
				Else: &step{Say: claudeTurn{result: tag("build.task", "create hello.txt"), in: 500, out: 80, cost: 0.003}.String()}},
		},
		"builder": {{Write: map[string]string{"hello.txt": "hello\n"},
			Emit: []scriptEmit{{Topic: "build.done", Payload: "wrote hello.txt"}}, Say: builder.String()}},
		"reviewer": {{Say: claudeTurn{
			tools:  []claudeToolUse{{"Read", map[string]string{"file_path": "hello.txt"}}},
			result: "Looks right. " + tag("review.approved", "hello.txt is correct") + "\n" + tag("deploy.now", "ship it"),
			in:     800, out: 120, cost: 0.004}.String()}},
	}}
}

// TestHeadlessRunGolden runs a scripted two-hat loop with --headless and
// compares its stdout, normalised, with the golden file.
func TestHeadlessRunGolden(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", headlessConfig+claudeCLI())
	w.script(headlessScript())

	r := w.ralph("run", "--headless")

	require.Equal(t, 0, r.code, r.stderr)
	kinds := headlessLines(t, r.stdout)
	assert.Equal(t, []string{"warning", "warning", "started"}, kinds[:3], "the config's warning and its topology's, then the run")
	golden.Assert(t, "testdata/headless/two_hats.golden", normalizeHeadless(r.stdout, w.dir))
	assert.Contains(t, r.stderr, "ended: completed (exit 0)", "the summary goes to stderr")
	assert.NotContains(t, r.stderr, `"event"`, "no JSON on stderr")
	assert.NotContains(t, r.stderr, "Wrote hello.txt", "the agent's text is not on stderr without --verbose")
}

// TestHeadlessTopologyWarning: what ralph validate would warn about the
// hats' hand-offs is printed on stderr before a run, and a program reading
// the stream gets it too, as a warning line.
func TestHeadlessTopologyWarning(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iterations: 1\n"+agentCLI()+
		"hats:\n  builder:\n    triggers: [task.start]\n    publishes: [build.done, LOOP_COMPLETE]\n")
	w.script(agentScript{Steps: []step{say("working")}})

	r := w.ralph("loop", "--headless")

	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, `publishes "build.done", but no hat triggers on it`)
	var warnings []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if m["event"] == "warning" {
			warnings = append(warnings, m["message"].(string))
		}
	}
	require.Len(t, warnings, 1, r.stdout)
	assert.Contains(t, warnings[0], `publishes "build.done", but no hat triggers on it`)
	assert.Contains(t, warnings[0], "ralph.yml:", "the warning names the file and line")
}

// TestHeadlessFailedBeforeTheLoop: a config error still produces a JSON
// line, so a program reading stdout learns why ralph stopped.
func TestHeadlessFailedBeforeTheLoop(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iteration: 3\n"+agentCLI())

	r := w.ralph("loop", "--headless")

	assert.Equal(t, 3, r.code)
	assert.Equal(t, []string{"failed"}, headlessLines(t, r.stdout))
	var f struct {
		Error    string `json:"error"`
		Hint     string `json:"hint"`
		ExitCode int    `json:"exit_code"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &f))
	assert.Contains(t, f.Error, "max_iteration")
	assert.Equal(t, 3, f.ExitCode)
	assert.Contains(t, r.stderr, "ralph: error:", "people still get the error on stderr")
}

// TestPlainOutputHasNoControlCharacters: without a terminal, or with
// TERM=dumb, stderr is plain lines, even when the agent prints escape
// sequences: each is dropped whole, not just its ESC.
func TestPlainOutputHasNoControlCharacters(t *testing.T) {
	t.Parallel()
	for _, term := range []string{"xterm-256color", "dumb"} {
		t.Run(term, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iterations: 2\n  completion_confirmations: 1\n"+agentCLI())
			w.script(agentScript{Steps: []step{say("\x1b[31mred\x1b[0m\rover\a \x1b[?25lhidden\x1b[?25h " +
				"\x1b]0;a title\a\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ " + tag("LOOP_COMPLETE", "done"))}})

			r := w.ralphEnv([]string{"TERM=" + term}, "loop")

			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stderr, "| redover hidden link <event")
			for _, litter := range []string{"[31m", "[0m", "[?25", "]0;", "a title", "example.com", "]8;;"} {
				assert.NotContains(t, r.stderr, litter, "a piece of an escape sequence was printed")
			}
			for _, c := range r.stderr {
				if c != '\n' && (c < 0x20 || (c >= 0x7f && c < 0xa0)) {
					t.Fatalf("stderr holds control character %q:\n%s", c, r.stderr)
				}
			}
		})
	}
}

func TestQuietHidesAgentTextVerboseShowsPrompt(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Say the magic word.\n  max_iterations: 2\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("abracadabra " + tag("LOOP_COMPLETE", "done"))}})

	quiet := w.ralph("loop", "--quiet")
	require.Equal(t, 0, quiet.code, quiet.stderr)
	assert.NotContains(t, quiet.stderr, "abracadabra")
	assert.Contains(t, quiet.stderr, "iteration 1/2")

	verbose := w.ralph("loop", "--fresh", "-v")
	require.Equal(t, 0, verbose.code, verbose.stderr)
	assert.Contains(t, verbose.stderr, "abracadabra")
	assert.Contains(t, verbose.stderr, "> Say the magic word.", "the prompt is shown")
}

// TestHeadlessCommit: an agent that commits produces a `commit` line with
// git's hash and subject, and the run's counts and summary include it.
func TestHeadlessCommit(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	agent := filepath.Join(w.state, "commit-agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(`#!/bin/sh
if [ ! -f hello.txt ]; then
  echo hello > hello.txt
  git add hello.txt
  git -c user.name=agent -c user.email=agent@example.com commit -q -m "feat: add hello.txt"
  echo "Committed."
fi
echo '<event topic="LOOP_COMPLETE">hello.txt is committed</event>'
`), 0o755))
	w.write("ralph.yml", "event_loop:\n  prompt: Commit hello.txt.\n  max_iterations: 3\n  completion_confirmations: 1\n"+
		"cli:\n  backend: command\n  command: "+agent+"\n")

	r := w.ralph("run", "--headless")

	require.Equal(t, 0, r.code, r.stderr)
	headlessLines(t, r.stdout)
	head := strings.TrimSpace(git(t, w.dir, "rev-parse", "HEAD"))
	var commit, complete map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		switch m["event"] {
		case "commit":
			commit = m
		case "complete":
			complete = m
		}
	}
	require.NotNil(t, commit, "a commit line:\n%s", r.stdout)
	assert.Equal(t, head, commit["hash"])
	assert.Equal(t, "feat: add hello.txt", commit["message"])
	assert.Equal(t, 1.0, commit["iteration"])
	assert.Equal(t, 1.0, complete["commits"])
	assert.Contains(t, r.stderr, "ralph: 1 commit: "+head[:10]+" feat: add hello.txt")
}
