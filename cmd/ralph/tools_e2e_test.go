package main

// disallowed_tools end to end: the list reaches the command line of the
// CLI each hat runs on; a CLI that cannot deny tools is refused before any
// agent runs; and the real Claude Code, against the scripted fake model,
// neither offers nor runs a denied tool (TestE2EAgentDisallowedTools, with
// RALPH_AGENTS_DIR as for TestE2EAgent).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/fakemodel"
	"github.com/ralph-loop/ralph/runfiles"
)

// fakeClaude stands in for Claude Code's binary: it writes its arguments,
// one a line, to $ARGV_DIR/argv-<hat>.txt and ends its turn with the
// hat's tag in Claude Code's result line.
const fakeClaude = `#!/bin/sh
cat >/dev/null
printf '%s\n' "$@" > "$ARGV_DIR/argv-$RALPH_HAT.txt"
case "$RALPH_HAT" in
builder) tag='<event topic=\"build.done\">built</event>' ;;
*) tag='<event topic=\"LOOP_COMPLETE\">reviewed</event>' ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$tag"
`

// toolsLoop is two hats on claude: cli: denies WebFetch to both, the
// builder denies itself Bash as well, the reviewer only Bash's touch.
const toolsLoop = `event_loop:
  prompt: Build it, then have it reviewed.
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 4
  max_consecutive_failures: 1
cli:
  backend: claude
  command: ./claude.sh
  disallowed_tools: [WebFetch]
hats:
  builder:
    triggers: [task.start]
    publishes: [build.done]
    instructions: Build it.
    disallowed_tools: [Bash]
  reviewer:
    triggers: [build.done]
    publishes: [LOOP_COMPLETE]
    instructions: Review it.
    disallowed_tools: ["Bash(touch:*)"]
`

func TestDisallowedToolsReachClaudeCommandLine(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", toolsLoop)
	w.write("claude.sh", fakeClaude)
	require.NoError(t, os.Chmod(filepath.Join(w.dir, "claude.sh"), 0o755))

	r := w.ralphEnv([]string{"ARGV_DIR=" + w.state}, "loop", "-c", "ralph.yml")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)

	argv := func(hat string) []string {
		data, err := os.ReadFile(filepath.Join(w.state, "argv-"+hat+".txt"))
		require.NoError(t, err, "the %s's agent did not run", hat)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	assert.Equal(t, []string{"-p", "--disallowedTools", "WebFetch", "Bash", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"},
		argv("builder"), "cli:'s list and the hat's own")
	assert.Equal(t, []string{"-p", "--disallowedTools", "WebFetch", "Bash(touch:*)", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"},
		argv("reviewer"), "cli:'s list and a pattern")

	denied := map[string][]string{}
	for _, rec := range w.events() {
		if rec.Err == nil && rec.Event.Topic == runfiles.TopicIterationStarted {
			var p runfiles.IterationStartedRecord
			require.NoError(t, json.Unmarshal(rec.Event.Payload, &p))
			denied[p.Hat] = p.DisallowedTools
		}
	}
	assert.Equal(t, map[string][]string{"builder": {"WebFetch", "Bash"}, "reviewer": {"WebFetch", "Bash(touch:*)"}}, denied, "the iterations' records")

	shown := w.ralph("hats", "show", "builder", "-c", "ralph.yml")
	require.Equal(t, 0, shown.code, shown.stderr)
	assert.Contains(t, shown.stdout, "denied tools:      WebFetch, Bash\n")
	listed := w.ralph("hats", "list", "--json", "-c", "ralph.yml")
	require.Equal(t, 0, listed.code, listed.stderr)
	var hatList []struct {
		ID              string   `json:"id"`
		DisallowedTools []string `json:"disallowed_tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(listed.stdout), &hatList), listed.stdout)
	for _, h := range hatList {
		want := map[string][]string{"builder": {"WebFetch", "Bash"}}[h.ID]
		if want == nil && h.ID == "reviewer" {
			want = []string{"WebFetch", "Bash(touch:*)"}
		}
		if want == nil {
			want = []string{"WebFetch"}
		}
		assert.Equal(t, want, h.DisallowedTools, "hats list --json: %s", h.ID)
	}
}

func TestDisallowedToolsRefusedWhereTheyCannotBeDenied(t *testing.T) {
	t.Parallel()
	t.Run("validate names the hat, the CLI and the line", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", "hats:\n  reviewer:\n    triggers: [task.start]\n    backend: codex\n    disallowed_tools: [shell]\n")
		r := w.ralph("validate", "-c", "ralph.yml")
		assert.NotEqual(t, 0, r.code)
		assert.Contains(t, r.stderr, "ralph.yml:5")
		assert.Contains(t, r.stderr, "hat reviewer: disallowed_tools needs a CLI that can deny tools, but it may run on codex (hats.reviewer.backend), which has no deny list")
		assert.Contains(t, r.stderr, "claude, copilot, gemini, opencode, qwen")
	})
	t.Run("--backend picks one at the start", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", "event_loop:\n  prompt: x\ncli:\n  backend: claude\n  disallowed_tools: [Bash]\n")
		r := w.ralph("loop", "-c", "ralph.yml", "--backend", "codex")
		assert.NotEqual(t, 0, r.code)
		assert.Contains(t, r.stderr, "codex cannot deny tools")
		assert.Contains(t, r.stderr, "remove disallowed_tools (Bash)")
		assert.NoDirExists(t, filepath.Join(w.dir, ".ralph", "runs"), "no run started")
	})
}

// config judges a config without backends; the two must agree on which
// CLIs can deny tools.
func TestDenyListsAgree(t *testing.T) {
	t.Parallel()
	for _, name := range append(config.AgentNames(), "command") {
		assert.Equal(t, backends.DenyList(name) != "", config.CanDenyTools(name), name)
	}
}

// TestE2EAgentDisallowedTools: the builder's Claude Code, denied Bash, is
// not offered it, and when the model calls it anyway the CLI answers with
// an error and runs nothing; the reviewer's, denied only Bash's touch
// (a pattern), has Bash, refuses touch and runs the rest.
func TestE2EAgentDisallowedTools(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	const refused = "No such tool available: Bash"
	const refusedByPattern = "Permission to use Bash with command touch pattern.txt has been denied."
	srv := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "I will run a command.", Tools: []fakemodel.ToolCall{
			{Call: &fakemodel.RawCall{Name: "Bash", Input: json.RawMessage(`{"command": "touch denied.txt", "description": "scripted step"}`)}}}},
		{Text: "Bash is not mine to use. " + tag("build.done", "built without a shell")},
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "touch pattern.txt"}}}},
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "echo ok > allowed.txt"}}}},
		{Text: "Reviewed. " + tag("LOOP_COMPLETE", "reviewed")},
	}}, fakemodel.WithWatch(refused, refusedByPattern))
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	w := newWorkspace(t)
	cfg := strings.Replace(toolsLoop, "command: ./claude.sh", "command: "+agentBinary(t, dir, "claude"), 1)
	w.write("ralph.yml", cfg)
	r := w.ralphAgent("claude", url, "loop", "-c", "ralph.yml")
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})
	require.Equal(t, 0, r.code, "ralph loop exit code; stderr:\n%s", r.stderr)

	assert.NoFileExists(t, filepath.Join(w.dir, "denied.txt"), "the denied Bash call ran")
	assert.NoFileExists(t, filepath.Join(w.dir, "pattern.txt"), "the Bash call the pattern denies ran")
	assert.FileExists(t, filepath.Join(w.dir, "allowed.txt"), "the reviewer's other Bash call did not run")
	assert.Equal(t, 5, srv.TurnsUsed(), "script turns consumed")
	for _, req := range srv.Requests() {
		if req.Kind != fakemodel.KindMain {
			continue
		}
		assert.NotContains(t, req.ToolNames, "WebFetch", "request %d (turn %d): cli: denies WebFetch to every hat", req.Seq, req.Turn)
		switch req.Turn {
		case 1, 2:
			assert.Contains(t, req.ToolNames, "Read", "request %d: the builder has its other tools", req.Seq)
			assert.NotContains(t, req.ToolNames, "Bash", "request %d: the builder was offered Bash", req.Seq)
		case 3, 4, 5:
			assert.Contains(t, req.ToolNames, "Bash", "request %d: the reviewer was not offered Bash", req.Seq)
		}
		switch req.Turn {
		case 2:
			assert.Contains(t, req.Seen, refused, "request %d: Claude Code's answer to the denied call", req.Seq)
		case 4:
			assert.Contains(t, req.Seen, refusedByPattern, "request %d: Claude Code's answer to the call the pattern denies", req.Seq)
		}
	}
}

// denyListCase is one CLI with a deny list, denied its shell: rule is what
// disallowed_tools names (copilot's permission kind, for --deny-tool; the
// tool's name for the others), tool is the shell tool's name in the
// requests, and offered says whether the CLI still offers it (copilot's
// rules refuse a call; the others take the tool away). refusal, when
// set, is the CLI's answer to the call, which the model sees.
type denyListCase struct {
	rule, tool string
	offered    bool
	refusal    string
}

var denyListCases = map[string]denyListCase{
	"copilot":  {rule: "shell", tool: "bash", offered: true, refusal: "Permission to run this tool was denied due to the following rules: `shell`"},
	"gemini":   {rule: "run_shell_command", tool: "run_shell_command"},
	"opencode": {rule: "bash", tool: "bash"},
	"qwen":     {rule: "run_shell_command", tool: "run_shell_command"},
}

// TestE2EAgentDenyList: the other CLIs with a deny list (Copilot CLI
// 1.0.102, Gemini CLI 0.61, OpenCode 1.18, Qwen Code 0.15), denied their
// shell, do not run the shell command the model asks for.
func TestE2EAgentDenyList(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	for cli, c := range denyListCases {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			var watch []fakemodel.Option
			if c.refusal != "" {
				watch = append(watch, fakemodel.WithWatch(c.refusal))
			}
			srv := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{
				{Text: "I will run a command.", Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "touch denied.txt"}}}},
				{Text: "No shell for me. " + tag("LOOP_COMPLETE", "done")},
			}}, watch...)
			url, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close() })

			w := newWorkspace(t)
			w.write("ralph.yml", "event_loop:\n  prompt: Run a command.\n  completion_confirmations: 1\n  max_iterations: 2\n  max_consecutive_failures: 1\n"+
				"cli:\n  backend: "+cli+"\n  command: "+agentBinary(t, dir, cli)+"\n  disallowed_tools: ["+c.rule+"]\n"+agentBackend[cli])
			r := w.ralphAgent(cli, url, "loop", "-c", "ralph.yml")
			t.Cleanup(func() {
				if t.Failed() {
					logAgentRun(t, w, srv, r)
				}
			})
			require.Equal(t, 0, r.code, "ralph loop exit code; stderr:\n%s", r.stderr)
			assert.NoFileExists(t, filepath.Join(w.dir, "denied.txt"), "the denied shell command ran")
			assert.Equal(t, 2, srv.TurnsUsed(), "script turns consumed")
			for _, req := range srv.Requests() {
				if req.Kind != fakemodel.KindMain {
					continue
				}
				assert.NotEmpty(t, req.ToolNames, "request %d: the CLI's other tools", req.Seq)
				assert.Equal(t, c.offered, slices.Contains(req.ToolNames, c.tool), "request %d offers %s: %v", req.Seq, c.tool, req.ToolNames)
				if c.refusal != "" && req.Turn == 2 {
					assert.Contains(t, req.Seen, c.refusal, "request %d: the CLI's answer to the denied call", req.Seq)
				}
			}
		})
	}
}
