package main

// TestE2EAgent runs `ralph loop` through each real agent CLI, installed by
// `make agents` (internal/agents/install.sh), against the scripted fake
// model of internal/fakemodel:
//
//	make e2e
//	RALPH_AGENTS_DIR=$PWD/.cache/agents go test -count=1 -run E2EAgent ./cmd/ralph/
//
// Without RALPH_AGENTS_DIR the test skips; with it, a CLI that is not
// installed is a failure, so CI cannot pass by testing nothing.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/fakemodel"
	"github.com/ralph-loop/ralph/internal/sandbox"
)

// agentLoopTimeout bounds one CLI's whole loop (two iterations). Each CLI
// takes 1-10 s a run on 2 idle cores; a busy machine has been seen to make
// that over a minute, and three with the other tests beside it. So the
// tests that run the real CLIs are not parallel with the rest: they run
// alone, two of their CLIs at a time at most.
const agentLoopTimeout = 4 * time.Minute

// agentHello is what the builder's agent writes with the CLI's own write tool.
const agentHello = "hello from the builder\n"

// agentLoopConfig: the builder takes the task and publishes build.done
// with `ralph emit`; the reviewer reads the file and completes with a tag.
// One confirmation, so the run is exactly two iterations.
const agentLoopConfig = `event_loop:
  prompt: Write hello.txt, then have it reviewed.
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 6
  max_consecutive_failures: 1
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
    instructions: Check hello.txt and complete the loop.
`

// agentLoopScript drives both iterations. The builder's agent writes the
// file, publishes from its shell tool and ends its turn; the reviewer's
// agent runs a shell command and ends with the completion tag.
func agentLoopScript(cli string) fakemodel.Script {
	return fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "I will write hello.txt.", Tools: []fakemodel.ToolCall{
			{Write: &fakemodel.WriteCall{Path: "hello.txt", Content: agentHello}}}},
		{Tools: []fakemodel.ToolCall{
			{Shell: &fakemodel.ShellCall{Command: emitCommand(cli) + ` emit build.done "hello.txt written"`}}}},
		{Text: "hello.txt is written and build.done is published."},
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "cat hello.txt"}}}},
		{Text: "hello.txt says hello. " + tag("LOOP_COMPLETE", "reviewed")},
	}}
}

// emitCommand is how the scripted agent calls ralph: "$RALPH_BIN", from
// the environment ralph gives the agent, because Codex's `bash -lc` and
// other login shells reset PATH. Qwen Code's shell tool refuses a command
// whose first word is a variable ("Could not identify command root to
// obtain permission from user.", even with --yolo: its getCommandRoots
// parses the command with shell-quote, which expands $RALPH_BIN to ""), so
// for Qwen the script runs what ralph's prompt tells every agent to run:
// the absolute path of the ralph binary.
func emitCommand(cli string) string {
	if cli == "qwen" {
		return ralphBin
	}
	return `"$RALPH_BIN"`
}

// agentBackend is the cli: section for one CLI, beyond backend and command:
// the model and arguments that match the configuration fakemodel.AgentEnv
// writes.
var agentBackend = map[string]string{
	"pi":   "  model: " + fakemodel.FakeModel + "\n  args: [--provider, fake]\n",
	"qwen": "  model: " + fakemodel.FakeModel + "\n  args: [--auth-type, openai]\n",
}

func TestE2EAgent(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	for _, cli := range fakemodel.Agents {
		t.Run(cli, func(t *testing.T) {
			// Two at a time on a 2-core machine (go test's default
			// -parallel is GOMAXPROCS): much of each run is the CLI's own
			// waiting (Qwen Code takes 2-3 s per shell command and ~2 s
			// to exit, OpenCode ~7 s an iteration), so the seven finish
			// in about 35 s rather than 60.
			t.Parallel()
			testAgentLoop(t, cli, agentBinary(t, dir, cli), "")
		})
	}
}

// TestE2EAgentSandboxed runs the same loop with each CLI confined by each
// Linux sandbox: the CLI must still reach its model on loopback, write its
// own state, its workspace and its temporary files, and run ralph emit.
func TestE2EAgentSandboxed(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		for _, cli := range fakemodel.Agents {
			t.Run(cli, func(t *testing.T) {
				t.Parallel()
				testAgentLoop(t, cli, agentBinary(t, dir, cli), string(mode))
			})
		}
	})
}

// testAgentLoop runs the two-hat loop with cli, confined as mode says
// ("": unconfined).
func testAgentLoop(t *testing.T, cli, bin, mode string) {
	srv := fakemodel.New(agentLoopScript(cli))
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	w := newWorkspace(t)
	sandboxSection := ""
	if mode != "" {
		sandboxSection = "sandbox:\n  mode: " + mode + "\n"
	}
	w.write("ralph.yml", agentLoopConfig+sandboxSection+fmt.Sprintf("cli:\n  backend: %s\n  command: %s\n", cli, bin)+agentBackend[cli])
	r := w.ralphAgent(cli, url, "loop", "-c", "ralph.yml")
	t.Logf("%s: exit %d in %s", cli, r.code, r.elapsed.Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})

	require.Equal(t, 0, r.code, "ralph loop exit code; stderr:\n%s", r.stderr)
	assert.Equal(t, agentHello, w.read("hello.txt"), "written by the CLI's own write tool")
	assert.Equal(t, []string{
		"ralph task.start",
		"agent build.done", "finished builder success",
		"tag LOOP_COMPLETE", "finished reviewer success",
		"terminate completed",
	}, w.flow())
	assertRoutedTo(t, w.events(), "build.done", "reviewer")
	assert.Equal(t, 5, srv.TurnsUsed(), "script turns consumed")
	for _, f := range w.finishedIterations() {
		t.Logf("%s: iteration %d (%s) took %dms, tokens %+v, tools %+v", cli, f.Iteration, f.Hat, f.Duration, f.Tokens, f.Tools)
		assert.Positive(t, f.Tokens.InputTokens+f.Tokens.OutputTokens, "iteration %d (%s) recorded no tokens", f.Iteration, f.Hat)
		assert.Positive(t, f.Tools.Shell, "iteration %d (%s): shell tool uses", f.Iteration, f.Hat)
		if f.Hat == "builder" {
			assert.Positive(t, f.Tools.Write, "iteration %d (%s): write tool uses", f.Iteration, f.Hat)
		}
	}
	for _, req := range srv.Requests() {
		assert.False(t, req.Exhausted, "request %d got past the end of the script", req.Seq)
	}
	if mode != "" {
		assert.Equal(t, []string{mode, mode}, sandboxesOf(t, w.events()), "both iterations ran confined")
	}
}

func agentBinary(t *testing.T, dir, cli string) string {
	t.Helper()
	bin := filepath.Join(dir, cli, "node_modules", ".bin", cli)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not installed at %s (RALPH_AGENTS_DIR=%s): run `make agents` (bash internal/agents/install.sh %s)", cli, bin, dir, dir)
	}
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	return abs
}

type agentResult struct {
	result
	elapsed time.Duration
}

// ralphAgent runs ralph with a minimal environment plus what
// fakemodel.AgentEnv gives the CLI (a fresh HOME with the CLI's config
// pointing at the fake model). ralph passes its environment on to the agent,
// so the CLI sees it too; a developer's own keys and provider variables are
// left out, so they cannot send the CLI elsewhere.
func (w *workspace) ralphAgent(cli, baseURL string, args ...string) agentResult {
	w.t.Helper()
	home, tmp := filepath.Join(w.state, "home"), filepath.Join(w.state, "tmp")
	require.NoError(w.t, os.MkdirAll(home, 0o755))
	require.NoError(w.t, os.MkdirAll(tmp, 0o755))
	env, err := fakemodel.AgentEnv(cli, baseURL, home)
	require.NoError(w.t, err)

	ctx, cancel := context.WithTimeout(w.t.Context(), agentLoopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ralphBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "LANG=C.UTF-8", "TERM=dumb"}, env...)
	// ralph kills its agents' groups itself; its own group is killed here
	// only if the whole loop hangs past the time limit.
	inOwnGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	r := agentResult{result: runProcess(w.t, cmd)}
	r.elapsed = time.Since(start)
	if ctx.Err() != nil {
		w.t.Errorf("ralph loop with %s did not finish within %s", cli, agentLoopTimeout)
	}
	return r
}

// finishedIteration is the part of an iteration.finished payload the test reads.
type finishedIteration struct {
	Iteration int               `json:"iteration"`
	Hat       string            `json:"hat"`
	Outcome   string            `json:"outcome"`
	Duration  int64             `json:"duration_ms"`
	Tokens    events.Usage      `json:"tokens"`
	Tools     events.ToolCounts `json:"tools"`
}

func (w *workspace) finishedIterations() []finishedIteration {
	w.t.Helper()
	var out []finishedIteration
	for _, rec := range w.events() {
		if rec.Err != nil || rec.Event.Topic != "iteration.finished" {
			continue
		}
		var f finishedIteration
		require.NoError(w.t, json.Unmarshal(rec.Event.Payload, &f))
		out = append(out, f)
	}
	require.NotEmpty(w.t, out, "no iteration.finished in the log")
	return out
}

// assertRoutedTo checks that the agent-sourced topic was routed to hat.
func assertRoutedTo(t *testing.T, recs []events.Record, topic, hat string) {
	t.Helper()
	for _, rec := range recs {
		if rec.Err != nil || rec.Event.Topic != "event.routed" {
			continue
		}
		var p struct {
			Topic string   `json:"topic"`
			To    []string `json:"to"`
		}
		if json.Unmarshal(rec.Event.Payload, &p) == nil && p.Topic == topic {
			assert.Contains(t, p.To, hat, "%s routed to", topic)
			return
		}
	}
	t.Errorf("no event.routed line for %s", topic)
}

// logAgentRun shows what it takes to see why a run failed: ralph's output,
// the event log, each iteration's raw agent output and the fake model's
// request log.
func logAgentRun(t *testing.T, w *workspace, srv *fakemodel.Server, r agentResult) {
	t.Logf("ralph stderr:\n%s", tailString(r.stderr, 4000))
	if data, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "current-events")); err == nil {
		if log, err := os.ReadFile(filepath.Join(w.dir, strings.TrimSpace(string(data)))); err == nil {
			t.Logf("event log:\n%s", tailString(string(log), 6000))
		}
	}
	raws, _ := filepath.Glob(filepath.Join(w.dir, ".ralph", "runs", "*", "iter-*.jsonl"))
	for _, raw := range raws {
		data, _ := os.ReadFile(raw)
		t.Logf("%s:\n%s", filepath.Base(raw), tailString(string(data), 6000))
	}
	t.Logf("requests:\n%s", srv.Transcript())
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// longPayloadScript: the builder's agent publishes the test log the test
// put in the workspace, on stdin of `ralph emit` (as an argument it would
// be too long); the reviewer's agent, whose prompt shows only the log's
// beginning and end, greps the whole of it from `ralph events` and
// completes.
func longPayloadScript() fakemodel.Script {
	return fakemodel.Script{Turns: []fakemodel.Turn{
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: `"$RALPH_BIN" emit test.log - < test.log`}}}},
		{Text: "Published the test log."},
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: `"$RALPH_BIN" events --topic test.log --payload | grep LOG-MIDDLE`}}}},
		{Text: "Read the whole log. " + tag("LOOP_COMPLETE", "reviewed")},
	}}
}

// TestE2EAgentLongPayload: a real agent CLI runs the iteration whose
// pending event is a 150 KB test log, in a run that stopped before it and
// is resumed, as a run that died on such a prompt would be. The model sees
// the log's beginning and end and the command that prints it whole, and
// the agent's command reads its middle.
func TestE2EAgentLongPayload(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	for _, cli := range []string{"codex", "gemini", "pi"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			testAgentLongPayload(t, cli, agentBinary(t, dir, cli))
		})
	}
}

func testAgentLongPayload(t *testing.T, cli, bin string) {
	srv := fakemodel.New(longPayloadScript(), fakemodel.WithWatch("LOG-HEAD", "LOG-MIDDLE", "LOG-TAIL", " events --offset "))
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	w := newWorkspace(t)
	w.write("ralph.yml", strings.Replace(longPayloadConfig, "  prompt_file: OBJECTIVE.md\n", "  prompt: Run the tests and review their log.\n", 1)+
		fmt.Sprintf("cli:\n  backend: %s\n  command: %s\n", cli, bin)+agentBackend[cli])
	w.write("test.log", longLog("LOG-", 150_000))
	r := w.ralphAgent(cli, url, "loop", "--max-iterations", "1")
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})
	require.Equal(t, 2, r.code, "stopped at max_iterations after the builder; stderr:\n%s", r.stderr)
	r = w.ralphAgent(cli, url, "loop", "--resume", "--max-iterations", "3")
	t.Logf("%s: resumed run exit %d in %s", cli, r.code, r.elapsed.Round(100*time.Millisecond))
	require.Equal(t, 0, r.code, "ralph loop --resume exit code; stderr:\n%s", r.stderr)
	assert.Equal(t, []string{
		"ralph task.start", "agent test.log", "finished builder success", "terminate max_iterations", "ralph loop.resumed",
		"tag LOOP_COMPLETE", "finished reviewer success", "terminate completed",
	}, w.flow())
	assert.Equal(t, 4, srv.TurnsUsed(), "script turns consumed")

	seen := map[int][]string{}
	for _, req := range srv.Requests() {
		if req.Turn > 0 {
			seen[req.Turn] = req.Seen
		}
	}
	assert.Equal(t, []string{"LOG-HEAD", "LOG-TAIL", " events --offset "}, seen[3],
		"the reviewer's prompt: the log's beginning and end, and the command that prints it whole")
	assert.Contains(t, seen[4], "LOG-MIDDLE", "the agent's command read the log's middle")
}

// TestE2EAgentLongPrompt: a prompt of 200 KB, longer than Linux lets one
// argument be (128 KiB), reaches each real agent CLI whole. ralph keeps
// the texts it passes on short (hats), so what makes it long here is the
// hat's own instructions. With prompt_mode: arg, a CLI that reads stdin
// gets it there all the same, with a warning.
func TestE2EAgentLongPrompt(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	for _, cli := range fakemodel.Agents {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			testAgentLongPrompt(t, cli, agentBinary(t, dir, cli), "")
		})
	}
	t.Run("pi with prompt_mode arg", func(t *testing.T) {
		t.Parallel()
		testAgentLongPrompt(t, "pi", agentBinary(t, dir, "pi"), "arg")
	})
}

func testAgentLongPrompt(t *testing.T, cli, bin, mode string) {
	srv := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{{Text: "Done. " + tag("LOOP_COMPLETE", "done")}}},
		fakemodel.WithWatch("INSTRUCTIONS-HEAD", "INSTRUCTIONS-TAIL"))
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	instructions := "INSTRUCTIONS-HEAD " + strings.Repeat("Keep every line of the change small. ", 200_000/37) + "INSTRUCTIONS-TAIL"
	w := newWorkspace(t)
	cfg := fmt.Sprintf(`event_loop:
  prompt: Finish.
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 2
  max_consecutive_failures: 1
hats:
  finisher:
    name: Finisher
    triggers: [task.start]
    publishes: [LOOP_COMPLETE]
    instructions: %q
cli:
  backend: %s
  command: %s
`, instructions, cli, bin) + agentBackend[cli]
	if mode != "" {
		cfg += "  prompt_mode: " + mode + "\n"
	}
	w.write("ralph.yml", cfg)
	r := w.ralphAgent(cli, url, "loop")
	t.Logf("%s: exit %d in %s", cli, r.code, r.elapsed.Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})
	require.Equal(t, 0, r.code, "ralph loop exit code; stderr:\n%s", r.stderr)
	var main []fakemodel.RequestLog
	for _, req := range srv.Requests() {
		if req.Kind == fakemodel.KindMain {
			main = append(main, req)
		}
	}
	require.NotEmpty(t, main)
	assert.Equal(t, []string{"INSTRUCTIONS-HEAD", "INSTRUCTIONS-TAIL"}, main[0].Seen, "the whole prompt reached the model")
	if mode == "arg" {
		assert.Contains(t, r.stderr, "too long for a command-line argument (at most 102400): pi gets it on stdin, although prompt_mode is arg")
	} else {
		assert.NotContains(t, r.stderr, "too long for a command-line argument")
	}
}
