package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// Starting what runs already is what a supervisor does after a crash of
// its own: a second autopilot says which one runs and succeeds. A loop in
// the checkout the autopilot merges into is refused, naming the autopilot,
// while the autopilot's own task loops, each in its worktree, go on.
func TestAStartBesideARunningAutopilot(t *testing.T) {
	t.Parallel()
	w := newHeldAutopilot(t)
	cmd, stderr := w.startRalph("autopilot")
	awaitHeldTasks(t, w)
	r := w.ralph("autopilot", "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st runfiles.AutopilotStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.True(t, st.Running)

	second := w.ralph("autopilot")
	assert.Equal(t, 0, second.code, second.stderr)
	assert.Contains(t, second.stderr, fmt.Sprintf("autopilot run %s is already running here (pid %d, started ", st.RunID, st.PID))
	assert.Contains(t, second.stderr, "`ralph autopilot status`")

	for _, args := range [][]string{{"loop", "-p", "work in the checkout"}, {"loop", "--resume"}} {
		loop := w.ralph(args...)
		assert.Equal(t, 3, loop.code, "%v: %s", args, loop.stderr)
		assert.Contains(t, loop.stderr, fmt.Sprintf("ralph: error: an autopilot runs in this checkout (run %s, pid %d, started ", st.RunID, st.PID))
		assert.Contains(t, loop.stderr, "ralph: hint: see it with `ralph autopilot status`, stop it with `ralph autopilot stop`")
	}
	logs, _ := filepath.Glob(filepath.Join(w.dir, ".ralph", "events-*.jsonl"))
	assert.Empty(t, logs, "the refused loops started no run")

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.Equal(t, 0, exitCodeOf(cmd.Wait()), stderr.String())
	assert.Equal(t, 3, strings.Count(stderr.String(), "completed: "), "every task's loop ran in its worktree: %s", stderr.String())
	assert.Equal(t, 1, strings.Count(stderr.String(), "autopilot ended"), "the second start ran nothing")
}

// A loop that runs in the repository's own checkout keeps the autopilot
// from starting there, which says which loop and changes nothing; a
// resume of that loop meanwhile says it runs.
func TestAnAutopilotBesideARunningLoop(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "- [ ] One\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{Sh: `touch "$SCRIPTAGENT_STATE/working"; ` + waitRelease, Say: tag("LOOP_COMPLETE", "done")}}})
	loop, loopStderr := w.startRalph("loop", "-p", "Tidy the README.")
	waitFor(t, "the loop's agent", func() bool { return fileExists(filepath.Join(w.state, "working")) })
	runID := w.status().RunID
	head := git(t, w.dir, "rev-parse", "HEAD")

	r := w.ralph("autopilot")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, fmt.Sprintf("ralph: error: a ralph loop is running in %s (run %s, pid %d", w.dir, runID, loop.Process.Pid))
	assert.Contains(t, r.stderr, "ralph: hint: see it with `ralph status` or `ralph events -f`, stop it with `ralph stop`")
	assert.NoFileExists(t, filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile), "the autopilot recorded nothing")
	assert.Equal(t, head, git(t, w.dir, "rev-parse", "HEAD"), "and claimed nothing")

	r = w.ralph("loop", "--resume")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, fmt.Sprintf("run %s is already running in this workspace (pid %d, ", runID, loop.Process.Pid))

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.NoError(t, loop.Wait(), loopStderr.String())
}
