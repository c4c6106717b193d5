package autopilot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/ralph-loop/ralph/config"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// runfiles' testdata/autopilot-v1 is what the previous ralph (state version 1, camelCase keys)
// left of an interrupted run: task a completed, b and c in slots 1 and 2,
// b having waited for a (task.held), and the run stopped resumable. It was
// written by that ralph's autopilot, not by hand.
const v1Run = "20261128-004300"

func copyV1(t *testing.T, ralphDir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(ralphDir, 0o700))
	for _, f := range []string{runfiles.AutopilotStateFile, runfiles.AutopilotEventsFile} {
		data, err := os.ReadFile(filepath.Join("..", "runfiles", "testdata", "autopilot-v1", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(ralphDir, f), data, 0o600))
	}
}

// An unfinished run an earlier ralph left goes on under its own id, does
// not run its completed task again, and from then on is written in
// snake_case: the state whole, the log from where the old one ended.
func TestAnUnfinishedRunOfVersion1GoesOnInSnakeCase(t *testing.T) {
	h := newHarness(t, task("a", 1, "component:api"), task("b", 2, "component:api"), task("c", 3))
	ralphDir := filepath.Join(h.repo, ".ralph")
	copyV1(t, ralphDir)
	oldLog, err := os.Stat(filepath.Join(ralphDir, runfiles.AutopilotEventsFile))
	require.NoError(t, err)

	h.start(t.Context(), h.settings(2))
	assert.Equal(t, v1Run, payloadOf(h.next(runfiles.TopicAutopilotStarted)).RunID, "the same run goes on")
	first, second := h.loop(), h.loop()
	assert.ElementsMatch(t, []string{"b", "c"}, []string{first.job.Task, second.job.Task})
	first.complete()
	second.complete()
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, 0, h.source.claimed["a"], "a was completed by the earlier ralph")

	st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
	require.NoError(t, err)
	assert.Equal(t, v1Run, st.RunID)
	assert.Equal(t, 3, st.Completed)

	state, err := os.ReadFile(filepath.Join(ralphDir, runfiles.AutopilotStateFile))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(state, &doc))
	assert.EqualValues(t, runfiles.AutopilotStateVersion, doc["version"])
	assertSnakeCase(t, runfiles.AutopilotStateFile, state)

	log, err := os.ReadFile(filepath.Join(ralphDir, runfiles.AutopilotEventsFile))
	require.NoError(t, err)
	newLines := log[oldLog.Size():]
	require.NotEmpty(t, newLines)
	sc := bufio.NewScanner(bytes.NewReader(newLines))
	for sc.Scan() {
		assertSnakeCase(t, runfiles.AutopilotEventsFile, sc.Bytes())
	}
}

var snakeKey = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// assertSnakeCase checks that every object key in the JSON document data
// is snake_case.
func assertSnakeCase(t *testing.T, what string, data []byte) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v), "%s: %s", what, data)
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, val := range v {
				assert.Regexp(t, snakeKey, k, "a key of %s: %s", what, data)
				walk(val)
			}
		case []any:
			for _, val := range v {
				walk(val)
			}
		}
	}
	walk(v)
}

// A task's log is found in the default worktrees_dir by readers that load
// no config (runfiles.TaskLog): the two defaults must be one.
func TestTheDefaultWorktreesDirIsRunfiles(t *testing.T) {
	assert.Equal(t, runfiles.DefaultWorktreesDir, config.Default().Autopilot.WorktreesDir)
}
