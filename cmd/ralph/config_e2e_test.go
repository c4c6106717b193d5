package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/runfiles"
)

// --set event_loop.max_iterations=1 ends the run after one iteration on
// the limit (exit 2); a plain resume keeps the run's --set, and one whose
// --set raises the limit goes on to completion.
func TestSetMaxIterationsStopsAfterOneIteration(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())

	r := w.ralph("loop", "--set", "event_loop.max_iterations=1")
	require.Equal(t, 2, r.code, r.stderr)
	assert.Equal(t, 1, w.iterationsRun())
	assert.Contains(t, r.stderr, "max_iterations (1)")

	r = w.ralph("loop", "--resume")
	assert.Equal(t, 2, r.code, "the run's --set still holds on a plain resume: %s", r.stderr)
	assert.Equal(t, 1, w.iterationsRun())

	r = w.ralph("loop", "--resume", "--set", "event_loop.max_iterations=10")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "terminate completed", last(w.flow()))
	assert.Equal(t, "hello\n", w.read("hello.txt"))
}

// A misspelt key in --set is refused before anything runs, naming the
// flag and the key it meant.
func TestSetTypoNamesTheKeyItMeant(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())

	r := w.ralph("loop", "--set", "event_loop.max_iteratons=1")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, `ralph: error: --set event_loop.max_iteratons: unknown key "max_iteratons" in event_loop; did you mean "max_iterations"?`)
	assert.Contains(t, r.stderr, "ralph: hint: rename it to \"max_iterations\"")
	assert.False(t, w.hasRun(), "nothing ran")
	assert.Equal(t, 0, w.agentRuns())
}

// config show --explain names the file and line of each value, the user
// config's file and line, --set, and the defaults; --json says the same.
func TestConfigShowExplainNamesWhereEachValueCameFrom(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	xdg := t.TempDir()
	user := filepath.Join(xdg, "ralph", config.UserFileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(user), 0o755))
	require.NoError(t, os.WriteFile(user, []byte("# my defaults\ncli:\n  model: sonnet\n  env:\n    MY_API_KEY: sk-live-0123456789\n"), 0o600))
	env := []string{"XDG_CONFIG_HOME=" + xdg}

	r := w.ralphEnv(env, "config", "show", "--explain", "--set", "event_loop.completion_confirmations=1")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "max_iterations: 12 # ralph.yml:3\n")
	assert.Contains(t, r.stdout, "model: sonnet # "+user+":3\n")
	assert.Contains(t, r.stdout, "completion_confirmations: 1 # --set event_loop.completion_confirmations\n")
	assert.Contains(t, r.stdout, "prompt_file: PROMPT.md # default\n")
	assert.Contains(t, r.stdout, "triggers: [build.task] # ralph.yml:")
	assert.NotContains(t, r.stdout, "sk-live-0123456789", "a secret in the config is never printed")

	r = w.ralphEnv(env, "config", "show", "--json", "--explain")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		Config map[string]any `json:"config"`
		Values []config.Value `json:"values"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.Equal(t, "sonnet", out.Config["cli"].(map[string]any)["model"])
	byPath := map[string]config.Value{}
	for _, v := range out.Values {
		byPath[v.Path] = v
	}
	assert.Equal(t, config.Value{Path: "cli.model", Value: "sonnet", Kind: config.FromUser, File: user, Line: 3}, byPath["cli.model"])
	assert.Equal(t, config.Value{Path: "event_loop.max_iterations", Value: float64(12), Kind: config.FromFile, File: "ralph.yml", Line: 3},
		byPath["event_loop.max_iterations"])
	assert.NotContains(t, r.stdout, "sk-live-0123456789")

	// The user's config lies under the project's: the project's backend wins.
	assert.Equal(t, config.FromFile, byPath["cli.backend"].Kind)
}

// A value the user's config sets reaches the loop, and the project's file
// still wins over it; a mistake in it names its file and line.
func TestUserConfigReachesTheLoop(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())
	xdg := t.TempDir()
	user := filepath.Join(xdg, "ralph", config.UserFileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(user), 0o755))
	require.NoError(t, os.WriteFile(user, []byte("event_loop:\n  max_iterations: 50\n  max_consecutive_failures: 1\ncli:\n  backend: codex\n"), 0o644))
	env := []string{"XDG_CONFIG_HOME=" + xdg}

	r := w.ralphEnv(env, "config", "show", "--explain")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "max_consecutive_failures: 1 # "+user+":3\n")
	assert.Contains(t, r.stdout, "backend: command # ralph.yml:")

	r = w.ralphEnv(env, "loop")
	require.Equal(t, 0, r.code, "the project's command backend wins over the user's codex: %s", r.stderr)

	require.NoError(t, os.WriteFile(user, []byte("event_loop:\n  max_iteration: 50\n"), 0o644))
	r = w.ralphEnv(env, "loop", "--fresh")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, user+`:2: unknown key "max_iteration" in event_loop; did you mean "max_iterations"?`)
	assert.True(t, strings.HasPrefix(r.stderr, "ralph: error: "), r.stderr)
}

// The autopilot's --set reaches every task's loop: here an environment
// variable of the agent's that no file sets.
func TestAutopilotSetReachesEveryTasksLoop(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "# Work\n\n- [ ] One\n- [ ] Two\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the work")
	w.script(agentScript{Steps: []step{{
		Sh:     `task=$(basename "$PWD"); echo "$TASK_MARK" > "$SCRIPTAGENT_STATE/mark-$task"; echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})

	r := w.ralph("autopilot", "--set", "cli.env.TASK_MARK=from-set", "--set", "autopilot.parallel=2")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.ElementsMatch(t, []string{"one", "two"}, w.mergedOrder())
	for _, task := range []string{"one", "two"} {
		mark, err := os.ReadFile(filepath.Join(w.state, "mark-"+task))
		require.NoError(t, err, task)
		assert.Equal(t, "from-set\n", string(mark), task)
	}

	r = w.ralph("autopilot", "--set", "autopilot.paralel=2", "--dry-run")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, `--set autopilot.paralel: unknown key "paralel" in autopilot; did you mean "parallel"?`)
}

// An autopilot killed mid-run and started again without --set goes on
// with the --set it started with, in its own settings and every task's
// loop, and a --set given again is laid over them.
func TestAutopilotStartedAgainKeepsItsSet(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "# Work\n\n- [ ] One\n- [ ] Two\n- [ ] Three\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the work")
	w.script(agentScript{Steps: []step{{
		Sh:     `task=$(basename "$PWD"); echo "$TASK_MARK $OTHER_MARK" > "$SCRIPTAGENT_STATE/mark-$task"; echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})

	killed := w.ralphEnv([]string{crashEnv + "=" + autopilot.FaultRunning + ":1"}, "autopilot",
		"--set", "cli.env.TASK_MARK=from-set", "--set", "autopilot.max_tasks=2")
	require.Equal(t, -1, killed.code, "killed as the first task's loop ran\nstderr:\n%s", killed.stderr)

	r := w.ralph("autopilot", "--set", "cli.env.OTHER_MARK=again")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "the unfinished run goes on with its --set cli.env.TASK_MARK=from-set --set autopilot.max_tasks=2")
	assert.ElementsMatch(t, []string{"one", "two"}, w.mergedOrder(), "max_tasks 2 from the first start's --set")
	mark, err := os.ReadFile(filepath.Join(w.state, "mark-two"))
	require.NoError(t, err)
	assert.Equal(t, "from-set again\n", string(mark), "the task the second start ran has both")
	st, err := runfiles.PeekAutopilotState(runfiles.In(w.dir).Path())
	require.NoError(t, err)
	assert.Equal(t, []string{"cli.env.TASK_MARK=from-set", "autopilot.max_tasks=2", "cli.env.OTHER_MARK=again"}, st.Sets)

	// A finished run's --set is not carried into the next one.
	w.write("TODO.md", w.read("TODO.md")+"- [ ] Four\n")
	git(t, w.dir, "commit", "-qam", "more work")
	r = w.ralph("autopilot", "--max-tasks", "1")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stderr, "goes on with its --set")
	st, err = runfiles.PeekAutopilotState(runfiles.In(w.dir).Path())
	require.NoError(t, err)
	assert.Empty(t, st.Sets)
}
