package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task names the agent its loop runs with, end to end: a prd.json
// story's "model" reaches its loop (ralph loop --model, recorded in the
// loop's launch and its iterations), a hostile model fails its story with
// the reason while the others run, and the dry run shows both.

// agentPrd names a model in US-1, hostile ones in US-2 and US-3, and none
// in US-4.
const agentPrd = `{
  "userStories": [
    {"id": "US-1", "title": "Named", "priority": 0, "passes": false, "model": "test-model-1"},
    {"id": "US-2", "title": "A flag", "priority": 1, "passes": false, "model": "--dangerously-skip-permissions"},
    {"id": "US-3", "title": "Spaces", "priority": 2, "passes": false, "model": "a b"},
    {"id": "US-4", "title": "Plain", "priority": 3, "passes": false}
  ]
}
`

func newAgentPrdRepo(t *testing.T) *workspace {
	t.Helper()
	w := newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n")
	w.write("prd.json", agentPrd)
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the prd")
	return w
}

func TestAutopilotDryRunShowsEachStorysModel(t *testing.T) {
	t.Parallel()
	w := newAgentPrdRepo(t)
	r := w.ralph("autopilot", "--dry-run", "--parallel", "2")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "US-1 (Named) [P0]: starts in slot 1; model test-model-1\n")
	assert.Contains(t, r.stdout, `US-2 (A flag): would fail: task US-2: model "--dangerously-skip-permissions" starts with "-"`)
	assert.Contains(t, r.stdout, `US-3 (Spaces): would fail: task US-3: model "a b" contains ' '`)
	assert.Contains(t, r.stdout, "US-4 (Plain) [P3]: starts in slot 2\n", "a story that names no model says none")
}

func TestAutopilotRunsAStoryWithItsModelAndFailsAHostileOne(t *testing.T) {
	t.Parallel()
	w := newAgentPrdRepo(t)
	w.script(taskAgent("0"))
	r := w.ralph("autopilot", "--parallel", "2")
	require.Equal(t, 1, r.code, "a story failed; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	assert.ElementsMatch(t, []string{"US-1", "US-4"}, w.mergedOrder(), "the stories with a usable agent ran")
	out := r.stdout + r.stderr
	assert.Contains(t, out, `task US-2: model "--dangerously-skip-permissions" starts with "-": a model's name starts with a letter or a digit (one starting with '-' would be read as a flag of the agent's); correct it in prd`)
	assert.Contains(t, out, `task US-3: model "a b" contains ' '`)
	assert.NotContains(t, w.agentTimes(), "US-2", "no agent ran for the hostile story")
	assert.NotContains(t, w.agentTimes(), "US-3")

	var prd struct {
		UserStories []struct {
			ID     string
			Passes bool
			Notes  string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(w.read("prd.json")), &prd))
	notes := map[string]string{}
	for _, s := range prd.UserStories {
		notes[s.ID] = s.Notes
		assert.Equal(t, s.ID == "US-1" || s.ID == "US-4", s.Passes, "%s", s.ID)
	}
	assert.Contains(t, notes["US-2"], `ralph: failed: not started: task US-2: model "--dangerously-skip-permissions"`, "the tracker hears why")

	// US-1's loop ran with the model: its launch and iterations say so;
	// US-4's with the config's (none).
	named := keptLoopLog(t, w, "US-1")
	assert.Contains(t, named, `"model":"test-model-1"`)
	assert.NotContains(t, keptLoopLog(t, w, "US-4"), `"model":"test-model-1"`)
}

// keptLoopLog is the loop log the autopilot kept of a merged task.
func keptLoopLog(t *testing.T, w *workspace, task string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "tasks", task, "loop-events.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(string(data)))
	return string(data)
}
