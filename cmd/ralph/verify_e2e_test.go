package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// (a) A claim before the work is done is rejected with the failing
// criterion; the next prompt shows it; the agent fixes it and claims again.
func TestCompletionRejectedUntilCriteriaPass(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", `event_loop:
  prompt: Create hello.txt saying hello.
  max_iterations: 6
acceptance_criteria:
  - type: file_contains
    path: hello.txt
    text: hello
`+agentCLI())
	w.script(agentScript{Steps: []step{
		say("All done. " + tag("LOOP_COMPLETE", "hello.txt is written")),
		{Write: map[string]string{"hello.txt": "hello\n"}, Say: "Now it is. " + tag("LOOP_COMPLETE", "hello.txt is written")},
	}})

	r := w.ralph("loop")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"ralph criteria.baseline", "ralph task.start",
		"tag LOOP_COMPLETE", "finished ralph success", "ralph event.rejected", "ralph completion.rejected",
		"tag LOOP_COMPLETE", "finished ralph success",
		"terminate completed"}, w.flow())
	assert.Contains(t, w.prompt(2), "file_contains hello.txt", "the next prompt names the failed criterion")
	assert.Contains(t, w.prompt(2), "FAILED")
}

// goProject makes the workspace a Go module whose test passes or fails.
func (w *workspace) goProject(pass bool) {
	w.write("go.mod", "module example.com/demo\n\ngo 1.22\n")
	w.write("add.go", "package demo\n\nfunc Add(a, b int) int { return a - b }\n")
	w.write("add_test.go", "package demo\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n")
	if pass {
		w.write("add.go", "package demo\n\nfunc Add(a, b int) int { return a + b }\n")
	}
	git(w.t, w.dir, "add", "-A")
	git(w.t, w.dir, "commit", "-qm", "start")
}

// (b) build.done gated on tests_pass while the tests fail comes back to the
// builder as build.done.blocked with the test output; once fixed it passes.
func TestGateBlocksWithTestOutput(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.goProject(false)
	w.write("ralph.yml", `event_loop:
  prompt: Fix Add.
  max_iterations: 8
  completion_confirmations: 1
gates:
  build.done: [tests_pass]
hats:
  builder:
    triggers: [task.start, build.done.blocked]
    publishes: [build.done]
  reviewer:
    triggers: [build.done]
    publishes: [LOOP_COMPLETE]
`+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"builder": {
			emitStep("build.done", "tests: pass (I think)"),
			{Write: map[string]string{"add.go": "package demo\n\nfunc Add(a, b int) int { return a + b }\n"},
				Emit: []scriptEmit{{Topic: "build.done", Payload: "fixed Add"}}},
		},
		"reviewer": {say(tag("LOOP_COMPLETE", "reviewed"))},
	}})

	r := w.ralph("loop")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"ralph task.start",
		"agent build.done", "finished builder success", "ralph event.rejected", "ralph build.done.blocked",
		"agent build.done", "finished builder success",
		"tag LOOP_COMPLETE", "finished reviewer success",
		"terminate completed"}, w.flow())
	assert.Contains(t, w.prompt(2), "tests_pass", "the builder is told which gate failed")
	assert.Contains(t, w.prompt(2), "Add(2, 3) = -1, want 5", "with the test output as evidence")
}

// (c) A ralph.json task file, whose acceptance criteria decide completion,
// runs to success.
func TestRalphJSONTaskFileCompletesOnItsCriteria(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.json", `{
	"task": "Create a hello.txt file with content 'Hello from Ralph'",
	"acceptance_criteria": [{"type": "file_exists", "path": "hello.txt"}],
	"max_iterations": 3,
	"budget": {"max_tokens": 10000}
}`)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{say("Looking around."), {Write: map[string]string{"hello.txt": "Hello from Ralph"}}}})

	r := w.ralph("loop", "-c", "ralph.json", "-c", "agent.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Hello from Ralph", w.read("hello.txt"))
	assert.Equal(t, []string{"ralph criteria.baseline", "ralph task.start", "finished ralph success",
		"finished ralph success", "ralph completion.verified", "terminate completed"}, w.flow())
	assert.Contains(t, r.stderr, "completed (exit 0) — the acceptance criteria passed", "no agent published a completion topic")
}

// (d) max_tokens exhausted ends the run with exit 2. The agent reports its
// usage in Claude's own stream-json format.
func TestMaxTokensExhausted(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	stream, err := filepath.Abs(filepath.Join("..", "..", "backends", "testdata", "claude", "stream-json-tool-loop.jsonl"))
	require.NoError(t, err)
	w.write("ralph.yml", fmt.Sprintf(`event_loop:
  prompt: Keep going.
  max_iterations: 10
  max_tokens: 5000
cli:
  backend: claude
  command: %s
`, agentBin))
	w.script(agentScript{Steps: []step{{PrintFile: stream}}})

	r := w.ralph("loop")

	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "budget_exhausted")
	assert.Equal(t, "terminate budget_exhausted", last(w.flow()))
}

// (e) Three iterations without progress end the run as stuck.
func TestStuckExits1(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  stuck_threshold: 3\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("I am not sure what to do.")}})

	r := w.ralph("loop")

	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "stuck")
	assert.Contains(t, r.stderr, "3 iterations in a row made no progress")
	assert.Equal(t, []string{"ralph task.start", "finished ralph success", "finished ralph success", "finished ralph success", "terminate stuck"}, w.flow())
}

// (f) A test that failed before the run, with baseline: ignore, does not
// block completion; the work the run was asked to do still has to pass.
func TestBaselineIgnoreDoesNotBlock(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("legacy_test.sh", "#!/bin/sh\necho 'legacy suite: 1 failure (known)'\nexit 1\n")
	require.NoError(t, os.Chmod(filepath.Join(w.dir, "legacy_test.sh"), 0o755))
	w.write("ralph.yml", `event_loop:
  prompt: Write notes.txt.
  max_iterations: 4
acceptance_criteria:
  - {type: tests_pass, command: ./legacy_test.sh, baseline: ignore}
  - {type: file_exists, path: notes.txt}
`+agentCLI())
	w.script(agentScript{Steps: []step{{Write: map[string]string{"notes.txt": "done\n"}, Say: tag("LOOP_COMPLETE", "notes written")}}})

	r := w.ralph("loop")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "terminate completed", last(w.flow()))
	assert.Contains(t, r.stderr, "still failing, as before the run (baseline: ignore): tests_pass")
	assert.Contains(t, w.read(filepath.Join(".ralph", "runs", runID(t, w), "summary.md")), "still failing")
}
