package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-loop/ralph/runfiles"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/view/api"
)

// The tests of `ralph mcp` drive the real binary with the MCP SDK's own
// client over stdio, beside a real loop or autopilot run by the scripted
// agent, and hold each tool's result to what the command line prints for
// the same request.

// mcpSession starts `ralph mcp -C dir` with env added to the test's
// environment (an agent's RALPH_* variables) and connects to it.
func mcpSession(t *testing.T, dir string, env ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(ralphBin, "mcp", "-C", dir)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "ralph-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, cs.Close())
		assert.Equal(t, 0, cmd.ProcessState.ExitCode(), "ralph mcp ends cleanly when its client hangs up")
	})
	return cs
}

// toolCall is a tool's result: its text, its structured output, and
// whether it is an error.
type toolCall struct {
	text       string
	structured map[string]any
	isError    bool
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) toolCall {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s: a failed request is a tool error, never a protocol one", name)
	require.Len(t, res.Content, 1, name)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok, "%s: text content", name)
	call := toolCall{text: text.Text, isError: res.IsError}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &call.structured))
	}
	return call
}

// ok calls a tool that must succeed.
func (c toolCall) ok(t *testing.T) toolCall {
	t.Helper()
	require.False(t, c.isError, c.text)
	return c
}

// cliError is what the command line printed of its failure: its
// "ralph: error:" and "ralph: hint:" lines.
func cliError(t *testing.T, r result) string {
	t.Helper()
	require.Equal(t, 3, r.code, r.stdout)
	return strings.TrimSpace(r.stderr)
}

// sameFailure checks that a tool failed as the command line did.
func sameFailure(t *testing.T, c toolCall, r result) {
	t.Helper()
	assert.True(t, c.isError, c.text)
	assert.Equal(t, cliError(t, r), c.text)
}

// withoutKeys is v, a decoded JSON value, without the members named keys
// at any depth: what changes from one read to the next (elapsed times).
func withoutKeys(v any, keys ...string) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range keys {
			delete(v, k)
		}
		for k, e := range v {
			v[k] = withoutKeys(e, keys...)
		}
	case []any:
		for i, e := range v {
			v[i] = withoutKeys(e, keys...)
		}
	}
	return v
}

func decodeJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(text), &v), text)
	return v
}

// sameStatus checks that the status tool says what the command line
// prints, but for the time that passed between the two reads.
func sameStatus(t *testing.T, c toolCall, r result) {
	t.Helper()
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, withoutKeys(decodeJSON(t, r.stdout), "elapsed"), withoutKeys(decodeJSON(t, c.text), "elapsed"))
}

// eventFlags are `ralph events`' flags for the events tool's arguments.
func eventFlags(args map[string]any) []string {
	flags := []string{"events", "--json"}
	for k, v := range args {
		if b, ok := v.(bool); ok && b {
			flags = append(flags, "--"+k)
		} else {
			flags = append(flags, "--"+k, fmt.Sprint(v))
		}
	}
	return flags
}

// sameEvents checks that the events tool lists, byte for byte, what
// `ralph events --json` prints with the same filters.
func sameEvents(t *testing.T, w *workspace, cs *sdk.ClientSession, queries ...map[string]any) {
	t.Helper()
	for _, q := range queries {
		c := callTool(t, cs, "events", q).ok(t)
		r := w.ralph(eventFlags(q)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.NotEmpty(t, r.stdout, "events %v: each query here finds events", q)
		assert.Equal(t, r.stdout, c.text, "events %v", q)
		lines, _ := c.structured["events"].([]any)
		assert.Len(t, lines, strings.Count(r.stdout, "\n"), "events %v: the structured output has the same events", q)
	}
}

// ralphEnvOfAgent is the RALPH_* environment the loop gave its agent, which the
// scripted agent wrote to agent-env: an MCP server the agent starts gets
// the same.
func (w *workspace) ralphEnvOfAgent() []string {
	w.t.Helper()
	var env []string
	data, err := os.ReadFile(filepath.Join(w.state, "agent-env"))
	require.NoError(w.t, err)
	for line := range strings.Lines(string(data)) {
		// The agent's process mark is left out: the test's MCP server
		// plays one the agent started, yet outlives the iteration, and
		// ralph stops every process that carries the mark of an
		// iteration's agent when the iteration ends.
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, procgroup.MarkEnv+"=") {
			env = append(env, line)
		}
	}
	return env
}

// lastLines is the log's last n lines, decoded, without their time.
func (w *workspace) lastLines(n int) []map[string]any {
	w.t.Helper()
	recs := w.events()
	require.GreaterOrEqual(w.t, len(recs), n)
	var out []map[string]any
	for _, r := range recs[len(recs)-n:] {
		var m map[string]any
		require.NoError(w.t, json.Unmarshal([]byte(r.Line), &m))
		delete(m, "ts")
		out = append(out, m)
	}
	return out
}

// mcpLoopConfig: the coordinator hands out the task; the builder works
// until the test releases it, and hands off through the MCP server.
const mcpLoopConfig = `event_loop:
  prompt: Build it.
  max_iterations: 10
  completion_confirmations: 1
hats:
  builder:
    name: Builder
    triggers: [build.task]
    publishes: [build.done, build.note]
    instructions: Build it.
`

// builderHeldUntil is a builder step that records the agent's RALPH_*
// environment, says it is working (builder-N) and waits for release-N.
func builderHeldUntil(n int) step {
	return step{Sh: fmt.Sprintf(`env | grep '^RALPH_' > "$SCRIPTAGENT_STATE/agent-env"; touch "$SCRIPTAGENT_STATE/builder-%d"; `+
		`while [ ! -e "$SCRIPTAGENT_STATE/release-%d" ]; do sleep 0.05; done`, n, n)}
}

func TestMCPDrivesALoop(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", mcpLoopConfig+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"ralph":   {{Say: tag("build.task", "go")}},
		"builder": {builderHeldUntil(1), builderHeldUntil(2)},
	}})
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the builder", func() bool { return fileExists(filepath.Join(w.state, "builder-1")) })
	// The agent's own MCP server, started with the environment the loop
	// gave the agent, as an agent CLI starts the servers in its config.
	env := w.ralphEnvOfAgent()
	require.Contains(t, strings.Join(env, "\n"), "RALPH_EVENTS_FILE=")
	cs := mcpSession(t, w.dir, env...)

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
	}
	assert.ElementsMatch(t, []string{"status", "events", "emit", "ask", "answer", "guide", "stop", "pause", "resume"}, names)

	st := callTool(t, cs, "status", nil).ok(t)
	assert.Equal(t, "loop", st.structured["kind"])
	sameStatus(t, st, w.ralph("status", "--json"))
	sameStatus(t, callTool(t, cs, "status", map[string]any{"last": 0}).ok(t), w.ralph("status", "--json", "--last", "0"))

	// emit writes the line `ralph emit` writes, with the agent's hat and
	// iteration.
	c := callTool(t, cs, "emit", map[string]any{"topic": "build.note", "payload": `{"files": 2}`, "json": true}).ok(t)
	assert.Equal(t, "published build.note", c.text)
	r := w.ralphEnv(env, "emit", "build.note", "--json", `{"files": 2}`)
	require.Equal(t, 0, r.code, r.stderr)
	lines := w.lastLines(2)
	assert.Equal(t, lines[1], lines[0], "the MCP server's line and ralph emit's")
	assert.Equal(t, "builder", lines[0]["hat"])
	assert.Equal(t, "agent", lines[0]["source"])
	assert.Equal(t, map[string]any{"files": float64(2)}, lines[0]["payload"])
	sameFailure(t, callTool(t, cs, "emit", map[string]any{"topic": "bad topic"}), w.ralphEnv(env, "emit", "bad topic"))
	sameFailure(t, callTool(t, cs, "emit", map[string]any{"topic": "build.done", "target": "buildr"}),
		w.ralphEnv(env, "emit", "build.done", "--target", "buildr"))
	sameFailure(t, callTool(t, cs, "emit", map[string]any{"topic": "build.done", "payload": "{", "json": true}),
		w.ralphEnv(env, "emit", "build.done", "--json", "{"))

	sameEvents(t, w, cs, map[string]any{}, map[string]any{"topic": "build.*"}, map[string]any{"hat": "builder"},
		map[string]any{"last": 2}, map[string]any{"iteration": 1}, map[string]any{"since": "1h"})
	sameFailure(t, callTool(t, cs, "events", map[string]any{"topic": "build..done"}), w.ralph("events", "--json", "--topic", "build..done"))
	sameFailure(t, callTool(t, cs, "pause", nil), w.ralph("autopilot", "pause"))

	// The agent asks a person, hands off, and ends its turn; the run
	// waits for the answer, which comes through the MCP server too.
	c = callTool(t, cs, "ask", map[string]any{"question": "Which port?", "options": []string{"80", "8080"}, "timeout": "30m"}).ok(t)
	id, _ := c.structured["id"].(string)
	assert.Equal(t, api.AskedSentence(id), c.text)
	sameFailure(t, callTool(t, cs, "ask", map[string]any{"question": " "}), w.ralphEnv(env, "ask", " "))
	bad := callTool(t, cs, "ask", map[string]any{"question": "Which port?", "timeout": "soon"})
	assert.True(t, bad.isError)
	assert.Contains(t, bad.text, `ralph: error: timeout "soon" is not a duration`+"\nralph: hint: ")
	callTool(t, cs, "emit", map[string]any{"topic": "build.done", "payload": "built"}).ok(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release-1"), nil, 0o644))
	waitForQuestion(t, stderr)

	st = callTool(t, cs, "status", nil).ok(t)
	sameStatus(t, st, w.ralph("status", "--json"))
	s := w.status()
	require.NotNil(t, s.Waiting)
	assert.Equal(t, id, s.Waiting.ID)
	assert.NotNil(t, s.Waiting.Deadline, "the question's timeout is kept")
	sameFailure(t, callTool(t, cs, "answer", map[string]any{"id": "q-nope", "text": "80"}), w.ralph("answer", "q-nope", "80"))
	c = callTool(t, cs, "answer", map[string]any{"text": "8080"}).ok(t)
	assert.Equal(t, "answered "+id+" (Which port?); the run goes on with its next iteration", c.text)
	waitFor(t, "the builder again", func() bool { return fileExists(filepath.Join(w.state, "builder-2")) })

	// stop says what ralph stop says, and stops the run.
	c = callTool(t, cs, "stop", nil).ok(t)
	assert.Equal(t, fmt.Sprintf("asked run %s (pid %d) to stop before its next iteration", s.RunID, s.PID), c.text)
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release-2"), nil, 0o644))
	assert.Equal(t, 1, exitCodeOf(loop.Wait()), stderr.String())
	assert.Contains(t, stderr.String(), id+" answered by mcp: 8080")
	assert.Equal(t, []string{"ralph task.start", "tag build.task", "finished ralph success", "agent build.note", "agent build.note",
		"agent human.asked", "agent build.done", "finished builder success", "human human.answered", "finished builder success",
		"terminate stopped"}, w.flow())
	sameFailure(t, callTool(t, cs, "stop", nil), w.ralph("stop"))
	sameStatus(t, callTool(t, cs, "status", nil).ok(t), w.ralph("status", "--json"))
	sameEvents(t, w, cs, map[string]any{}, map[string]any{"topic": "human.*"}, map[string]any{"hat": "builder", "last": 3})

	// The run has stopped and can be resumed: asking still works, with the
	// warning `ralph ask` gives, and the same line.
	c = callTool(t, cs, "ask", map[string]any{"question": "Resume?"}).ok(t)
	r = w.ralphEnv(env, "ask", "Resume?")
	require.Equal(t, 0, r.code, r.stderr)
	ids := regexp.MustCompile(`q-[0-9a-f]{6}`)
	assert.Equal(t, ids.ReplaceAllString(strings.TrimSpace(r.stdout)+"\n"+strings.TrimSpace(r.stderr), "q-ID"), ids.ReplaceAllString(c.text, "q-ID"))
	assert.Contains(t, c.structured["warning"], "the event will be read when the run is resumed")
	lines = w.lastLines(2)
	for _, l := range lines {
		l["payload"].(map[string]any)["id"] = "q-ID"
	}
	assert.Equal(t, lines[1], lines[0], "the MCP server's question and ralph ask's")
}

func TestMCPPausesAndResumesAnAutopilot(t *testing.T) {
	t.Parallel()
	w := newHeldAutopilot(t)
	cmd, stderr := w.startRalph("autopilot")
	awaitHeldTasks(t, w)
	cs := mcpSession(t, w.dir)

	st := callTool(t, cs, "status", nil).ok(t)
	assert.Equal(t, "autopilot", st.structured["kind"])
	sameStatus(t, st, w.ralph("autopilot", "status", "--json"))
	var s runfiles.AutopilotStatus
	require.NoError(t, json.Unmarshal([]byte(st.text), &s))
	assert.Len(t, s.Active, 2)
	asked := func(req string) string {
		return "asked autopilot " + s.RunID + " (pid " + strconv.Itoa(s.PID) + ") to " + req
	}

	assert.Equal(t, asked("pause"), callTool(t, cs, "pause", nil).ok(t).text)
	waitFor(t, "the pause", func() bool { return strings.Count(stderr.String(), "paused: no new tasks start") == 1 })
	waitFor(t, "autopilot.paused", func() bool { return autopilotLogHas(t, w, runfiles.TopicAutopilotPaused) })
	paused := func() bool {
		return callTool(t, cs, "status", nil).ok(t).structured["autopilot"].(map[string]any)["paused"] == true
	}
	waitFor(t, "the status tool to say paused", paused)
	assert.Equal(t, asked("resume"), callTool(t, cs, "resume", nil).ok(t).text)
	waitFor(t, "autopilot.resumed", func() bool { return autopilotLogHas(t, w, runfiles.TopicAutopilotResumed) })
	waitFor(t, "the status tool to say running again", func() bool { return !paused() })
	assert.Equal(t, asked("pause"), callTool(t, cs, "pause", nil).ok(t).text)
	waitFor(t, "the second pause", func() bool { return strings.Count(stderr.String(), "paused: no new tasks start") == 2 })

	sameEvents(t, w, cs, map[string]any{"autopilot": true}, map[string]any{"autopilot": true, "topic": "autopilot.*"},
		map[string]any{"task": "one"}, map[string]any{"task": "two", "last": 2})
	sameFailure(t, callTool(t, cs, "events", map[string]any{"task": "nine"}), w.ralph("events", "--json", "--task", "nine"))

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	waitFor(t, "both merges", func() bool { return strings.Count(stderr.String(), "completed: ") == 2 })
	// stop stops the autopilot, as ralph autopilot stop does.
	assert.Equal(t, asked("stop"), callTool(t, cs, "stop", nil).ok(t).text)
	require.Equal(t, 0, exitCodeOf(cmd.Wait()), stderr.String())
	assert.Contains(t, w.read("TODO.md"), "- [ ] Three", "no task starts after a pause and a stop")
	sameFailure(t, callTool(t, cs, "stop", nil), w.ralph("autopilot", "stop"))
	sameFailure(t, callTool(t, cs, "resume", nil), w.ralph("autopilot", "resume"))
	sameStatus(t, callTool(t, cs, "status", nil).ok(t), w.ralph("autopilot", "status", "--json"))
}

// A client that sends a line that is no JSON-RPC 2.0 message (not JSON,
// another version, longer than ralph mcp reads as one) is answered with
// the JSON-RPC error that says why, and its session goes on: such a line
// once ended ralph mcp.
func TestMCPAnswersABadLineAndGoesOn(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	cmd := exec.Command(ralphBin, "mcp", "-C", w.dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	answers := bufio.NewScanner(stdout)
	answers.Buffer(nil, 1<<20)
	exchange := func(line string) (id string, code int, message string, result json.RawMessage) {
		t.Helper()
		_, err := io.WriteString(stdin, line+"\n")
		require.NoError(t, err)
		require.True(t, answers.Scan(), "ralph mcp answers: %s", stderr.String())
		var r struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		require.NoError(t, json.Unmarshal(answers.Bytes(), &r), answers.Text())
		if r.Error != nil {
			code, message = r.Error.Code, r.Error.Message
		}
		return string(r.ID), code, message, r.Result
	}

	_, code, msg, _ := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	require.Zero(t, code, msg)
	_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)

	id, code, msg, _ := exchange("this is not JSON")
	assert.Equal(t, []any{"null", -32700}, []any{id, code}, msg)
	id, code, msg, _ = exchange(`{"jsonrpc":"1.0","id":2,"method":"tools/list"}`)
	assert.Equal(t, []any{"2", -32600}, []any{id, code}, msg)
	assert.Contains(t, msg, `"1.0"`)
	id, code, msg, _ = exchange(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`)
	assert.Equal(t, []any{"null", -32600}, []any{id, code}, msg)
	assert.Contains(t, msg, "longer than")

	id, code, msg, result := exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"status","arguments":{}}}`)
	require.Zero(t, code, msg)
	assert.Equal(t, "4", id)
	assert.Contains(t, string(result), `"kind"`, "the next request is answered")

	require.NoError(t, stdin.Close())
	assert.NoError(t, cmd.Wait(), "ralph mcp ends cleanly when its client hangs up: %s", stderr.String())
}
