package tasks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prd.json's dependsOn: a story waits until every story it names passes;
// a name that is no story's, or stories that wait for each other, are
// refused with where they are and how to fix them.

func openPrd(t *testing.T, content string) (Source, string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "prd.json", content)
	src, err := Open(Spec{Type: "prd"}, dir)
	require.NoError(t, err)
	return src, dir
}

func TestPrdStoryWaitsForEveryStoryItDependsOn(t *testing.T) {
	src, _ := openPrd(t, `{"userStories": [
  {"id": "US-1", "title": "Schema", "priority": 1, "passes": false},
  {"id": "US-2", "title": "Done already", "priority": 1, "passes": true},
  {"id": "US-3", "title": "API", "priority": 0, "passes": false, "dependsOn": ["US-1", "US-2"]},
  {"id": "US-4", "title": "Docs", "priority": 0, "passes": false, "dependsOn": ["US-3", "US-1", "US-3"]},
  {"id": "US-5", "title": "Only what passes", "priority": 2, "passes": false, "dependsOn": ["US-2"]},
  {"id": "US-6", "title": "No list", "priority": 2, "passes": false, "dependsOn": []}
]}
`)
	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"US-1", "US-5", "US-6"}, ids(ready), "a story whose dependencies all pass is ready")
	assert.Empty(t, ready[1].Deps)

	blocked, err := src.(Blocker).Blocked(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"US-3", "US-4"}, ids(blocked))
	assert.Equal(t, []string{"US-1"}, blocked[0].Deps, "only what does not pass yet is waited for")
	assert.Equal(t, []string{"US-3", "US-1"}, blocked[1].Deps, "in the order written, each once")

	require.NoError(t, src.Close(ctx, "US-1", "merged"))
	ready, err = src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"US-3", "US-5", "US-6"}, ids(ready))
	docs, err := src.Show(ctx, "US-4")
	require.NoError(t, err)
	assert.Equal(t, []string{"US-3"}, docs.Deps)

	require.NoError(t, src.Close(ctx, "US-3", "merged"))
	ready, err = src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"US-4", "US-5", "US-6"}, ids(ready))
	blocked, err = src.(Blocker).Blocked(ctx)
	require.NoError(t, err)
	assert.Empty(t, blocked)
}

// requireRefusedUnchanged checks that every way of using the source fails
// with target's type and the file stays as it was.
func requireRefusedUnchanged(t *testing.T, src Source, dir string, target any) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dir, "prd.json"))
	require.NoError(t, err)
	_, err = src.(Blocker).Blocked(ctx)
	require.ErrorAs(t, err, target)
	_, err = src.Show(ctx, "US-1")
	require.ErrorAs(t, err, target)
	require.ErrorAs(t, src.Close(ctx, "US-1", "merged"), target)
	require.ErrorAs(t, src.Fail(ctx, "US-1", "broken"), target)
	after, err := os.ReadFile(filepath.Join(dir, "prd.json"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the file is as it was")
}

func TestPrdRefusesADependencyOnNoStory(t *testing.T) {
	src, dir := openPrd(t, `{
  "userStories": [
    {"id": "US-1", "title": "One", "passes": false},
    {
      "id": "US-2",
      "title": "Two",
      "passes": false,
      "dependsOn": ["US-1", "US-01"]
    }
  ]
}
`)
	_, err := src.Ready(ctx)
	var unknown *UnknownDepError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, UnknownDepError{Task: "US-2", Dep: "US-01", Kind: "story", In: "prd.json", Place: "userStories[1] on line 4", Fix: unknown.Fix}, *unknown)
	assert.EqualError(t, err, `story "US-2" in prd.json (userStories[1] on line 4) depends on "US-01", which is not the id of any story in prd.json`)
	assert.Equal(t, `dependsOn lists the ids of the stories a story waits for: correct "US-01" in the dependsOn of US-2, or add the story it means to prd.json`,
		unknown.Hint())
	requireRefusedUnchanged(t, src, dir, &unknown)
}

func TestPrdRefusesStoriesThatDependOnEachOther(t *testing.T) {
	cases := []struct {
		name    string
		stories string
		cycle   []string
		places  []string
		fix     string
	}{
		{
			name: "two",
			stories: `
    {"id": "US-1", "title": "One", "passes": false, "dependsOn": ["US-3"]},
    {"id": "US-2", "title": "Two", "passes": false},
    {"id": "US-3", "title": "Three", "passes": false, "dependsOn": ["US-2", "US-1"]}`,
			cycle:  []string{"US-1", "US-3", "US-1"},
			places: []string{"userStories[0] on line 3", "userStories[2] on line 5"},
			fix:    `remove one of these dependencies, e.g. "US-1" from the dependsOn of US-3`,
		},
		{
			name: "longer, reached from a story outside it",
			stories: `
    {"id": "US-1", "title": "One", "passes": false, "dependsOn": ["US-2"]},
    {"id": "US-2", "title": "Two", "passes": true, "dependsOn": ["US-4"]},
    {"id": "US-3", "title": "Three", "passes": false, "dependsOn": ["US-2"]},
    {"id": "US-4", "title": "Four", "passes": false, "dependsOn": ["US-3"]}`,
			cycle:  []string{"US-2", "US-4", "US-3", "US-2"},
			places: []string{"userStories[1] on line 4", "userStories[3] on line 6", "userStories[2] on line 5"},
			fix:    `e.g. "US-2" from the dependsOn of US-3`,
		},
		{
			name: "itself",
			stories: `
    {"id": "US-1", "title": "One", "passes": false},
    {"id": "US-2", "title": "Two", "passes": false, "dependsOn": ["US-1", "US-2"]}`,
			cycle:  []string{"US-2", "US-2"},
			places: []string{"userStories[1] on line 4"},
			fix:    `a task cannot wait for itself: remove "US-2" from its own dependsOn`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, dir := openPrd(t, "{\n  \"userStories\": ["+c.stories+"\n  ]\n}\n")
			_, err := src.Ready(ctx)
			var cycle *DepCycleError
			require.ErrorAs(t, err, &cycle)
			assert.Equal(t, c.cycle, cycle.Cycle)
			assert.Equal(t, c.places, cycle.Places)
			assert.Equal(t, "prd.json", cycle.In)
			assert.Contains(t, err.Error(), "stories in prd.json depend on each other in a cycle, so none of them can start: ")
			assert.Contains(t, cycle.Hint(), c.fix)
			requireRefusedUnchanged(t, src, dir, &cycle)
		})
	}
}

func TestPrdCycleIsNamedInOrder(t *testing.T) {
	src, _ := openPrd(t, `{"userStories": [
  {"id": "US-1", "passes": false, "dependsOn": ["US-3"]},
  {"id": "US-2", "passes": false},
  {"id": "US-3", "passes": false, "dependsOn": ["US-1"]}
]}
`)
	_, err := src.Ready(ctx)
	assert.EqualError(t, err, "stories in prd.json depend on each other in a cycle, so none of them can start: "+
		"US-1 → US-3 → US-1 (userStories[0] on line 2, userStories[2] on line 4)")
}

func TestDepCycle(t *testing.T) {
	cases := []struct {
		name string
		ids  []string
		deps map[string][]string
		want []string
	}{
		{name: "none", ids: []string{"a", "b", "c"}, deps: map[string][]string{"b": {"a"}, "c": {"a", "b"}}},
		{name: "diamond is no cycle", ids: []string{"a", "b", "c", "d"}, deps: map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"b", "c"}}},
		{name: "self", ids: []string{"a"}, deps: map[string][]string{"a": {"a"}}, want: []string{"a", "a"}},
		{name: "two", ids: []string{"a", "b"}, deps: map[string][]string{"a": {"b"}, "b": {"a"}}, want: []string{"a", "b", "a"}},
		{name: "the first in the tracker's order", ids: []string{"x", "a", "b", "c"},
			deps: map[string][]string{"x": {"c"}, "a": {"b"}, "b": {"a"}, "c": {"x"}}, want: []string{"x", "c", "x"}},
		{name: "only the cycle, not the path to it", ids: []string{"a", "b", "c", "d"},
			deps: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": {"b"}}, want: []string{"b", "c", "d", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, depCycle(c.ids, c.deps))
		})
	}
}

func TestCommandListRefusesOpenTasksInACycle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "tasks.jsonl", `{"id": "a", "deps": ["c"]}
{"id": "b", "status": "closed", "deps": ["a"]}
{"id": "c", "deps": ["d"]}

{"id": "d", "deps": ["a", "b"]}
`)
	src, err := Open(Spec{Type: "command", List: "cat tasks.jsonl", Close: "touch closed-$RALPH_TASK_ID"}, dir)
	require.NoError(t, err)
	_, err = src.Ready(ctx)
	var cycle *DepCycleError
	require.ErrorAs(t, err, &cycle)
	assert.Equal(t, []string{"a", "c", "d", "a"}, cycle.Cycle)
	assert.EqualError(t, err, "autopilot.source list (cat tasks.jsonl): tasks in its output depend on each other in a cycle, "+
		"so none of them can start: a → c → d → a (line 1, line 3, line 5)")
	assert.Contains(t, cycle.Hint(), `e.g. "a" from the deps of d`)
	require.Error(t, src.Close(ctx, "a", "merged"))
	assert.NoFileExists(t, filepath.Join(dir, "closed-a"), "no command runs for a task of a list that cannot be read")
}

// A cycle through a closed task blocks nothing: its dep is met.
func TestCommandListCycleThroughAClosedTaskIsNoCycle(t *testing.T) {
	tasks, err := parseCommandList([]byte(`[{"id": "a", "deps": ["b"]}, {"id": "b", "status": "done", "deps": ["a"]}]`))
	require.NoError(t, err)
	require.Len(t, tasks, 2)
	_, err = parseCommandList([]byte(`[{"id": "a", "deps": ["a"]}]`))
	var cycle *DepCycleError
	require.ErrorAs(t, err, &cycle)
	assert.Equal(t, `a task cannot wait for itself: remove "a" from its own deps`, cycle.Hint())
}
