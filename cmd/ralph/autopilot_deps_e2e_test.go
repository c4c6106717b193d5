package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prd.json's dependsOn, end to end: a story starts only once every story
// it depends on has merged, the dry run says what each blocked story waits
// for, and stories that wait for each other are refused before anything
// runs.

// dependentPrd is a prd.json in which US-2, the highest priority, depends
// on US-1, the lowest; US-3 depends on nothing.
const dependentPrd = `{
  "project": "demo",
  "userStories": [
    {"id": "US-1", "title": "Schema", "priority": 3, "passes": false},
    {"id": "US-2", "title": "API on the schema", "priority": 0, "passes": false, "dependsOn": ["US-1"]},
    {"id": "US-3", "title": "Logo", "priority": 1, "passes": false}
  ]
}
`

func TestAutopilotRunsAPrdStoryAfterWhatItDependsOnMerged(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n")
	w.write("prd.json", dependentPrd)
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the prd")
	// Each task's agent first notes which tasks' files its worktree has:
	// a worktree starts from the base branch as it is when the task starts.
	script := taskAgent("0.3")
	script.Steps[0].Sh = `ls *.txt > "$SCRIPTAGENT_STATE/seen-$(basename "$PWD")" 2>/dev/null; ` + script.Steps[0].Sh
	w.script(script)

	// Two slots: without its dependency US-2 would start first, at once.
	r := w.ralph("autopilot", "--parallel", "2")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	order := w.mergedOrder()
	assert.ElementsMatch(t, []string{"US-1", "US-2", "US-3"}, order)
	assert.Less(t, slices.Index(order, "US-1"), slices.Index(order, "US-2"), "a story merges after the story it depends on")
	seen, err := os.ReadFile(filepath.Join(w.state, "seen-US-2"))
	require.NoError(t, err)
	assert.Contains(t, string(seen), "US-1.txt", "US-2's worktree started from a base branch with US-1 merged")
	times := w.agentTimes()
	require.Len(t, times["US-1"], 1)
	require.Len(t, times["US-2"], 1)
	assert.Less(t, times["US-1"][0].end, times["US-2"][0].start, "US-2's agent started after US-1's ended")

	var prd struct {
		UserStories []struct {
			ID     string
			Passes bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(w.read("prd.json")), &prd))
	for _, s := range prd.UserStories {
		assert.True(t, s.Passes, "%s passes", s.ID)
	}
	w.assertCleanAfterRun("prd.json")
}

func TestAutopilotDryRunShowsWhatAPrdStoryWaitsFor(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n")
	w.write("prd.json", dependentPrd)
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the prd")

	r := w.ralph("autopilot", "--dry-run", "--parallel", "2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "2 tasks ready in prd")
	assert.Contains(t, r.stdout, "  1. US-3 (Logo) [P1]: starts in slot 1\n")
	assert.Contains(t, r.stdout, "  2. US-1 (Schema) [P3]: starts in slot 2\n")
	assert.Contains(t, r.stdout, "blocked by dependencies (1):\n     US-2 (API on the schema): waits for US-1\n")

	r = w.ralph("autopilot", "--dry-run", "--headless")
	require.Equal(t, 0, r.code, r.stderr)
	var plan struct {
		Blocked []struct {
			ID   string   `json:"id"`
			Deps []string `json:"deps"`
		} `json:"blocked"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &plan))
	require.Len(t, plan.Blocked, 1)
	assert.Equal(t, "US-2", plan.Blocked[0].ID)
	assert.Equal(t, []string{"US-1"}, plan.Blocked[0].Deps)
}

// Stories that wait for each other, or for a story that is not there,
// could never all run: the run and the dry run refuse them, naming them,
// and change nothing.
func TestAutopilotRefusesPrdStoriesThatCannotStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, stories string
		want          []string
	}{
		{name: "cycle", stories: `
    {"id": "US-1", "title": "One", "passes": false, "dependsOn": ["US-3"]},
    {"id": "US-2", "title": "Two", "passes": false},
    {"id": "US-3", "title": "Three", "passes": false, "dependsOn": ["US-1"]}`,
			want: []string{"ralph: error: stories in prd.json depend on each other in a cycle, so none of them can start: " +
				"US-1 → US-3 → US-1 (userStories[0] on line 3, userStories[2] on line 5)",
				`ralph: hint: each waits for the next to be done, so none can start: remove one of these dependencies, e.g. "US-1" from the dependsOn of US-3`}},
		{name: "unknown", stories: `
    {"id": "US-1", "title": "One", "passes": false},
    {"id": "US-2", "title": "Two", "passes": false, "dependsOn": ["US-7"]}`,
			want: []string{`ralph: error: story "US-2" in prd.json (userStories[1] on line 4) depends on "US-7", which is not the id of any story in prd.json`,
				`ralph: hint: dependsOn lists the ids of the stories a story waits for: correct "US-7" in the dependsOn of US-2`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n")
			w.script(taskAgent("0"))
			w.write("prd.json", "{\n  \"userStories\": ["+c.stories+"\n  ]\n}\n")
			git(t, w.dir, "add", "-A")
			git(t, w.dir, "commit", "-q", "-m", "tasks")
			before := snapshot(t, w.dir)
			for _, args := range [][]string{{"autopilot"}, {"autopilot", "--dry-run"}} {
				r := w.ralph(args...)
				assert.Equal(t, 3, r.code, "%v\nstdout:\n%s\nstderr:\n%s", args, r.stdout, r.stderr)
				for _, s := range c.want {
					assert.Contains(t, r.stderr, s, "%v", args)
				}
			}
			assert.Equal(t, before, snapshot(t, w.dir), "the repository and the tracker are byte for byte as they were")
			assert.NoFileExists(t, filepath.Join(w.state, "times"), "no agent ran")
		})
	}
}
