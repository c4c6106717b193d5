package tasks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakes/fakestest"
)

// A tracker with two tasks of one id is refused by every read, and the
// error says which id, where, and how to fix it: the autopilot knows a
// task by its id alone, so it would run the first of the two on every run
// and never the second.

// requireDuplicate checks that err is a *DuplicateIDError of id in in,
// at places, and returns its hint.
func requireDuplicate(t *testing.T, err error, id, in string, places ...string) string {
	t.Helper()
	var dup *DuplicateIDError
	require.ErrorAs(t, err, &dup)
	assert.Equal(t, id, dup.ID)
	assert.Equal(t, in, dup.In)
	assert.Equal(t, places, dup.Places)
	assert.NotEmpty(t, dup.Hint())
	return dup.Hint()
}

func TestPrdRefusesTwoStoriesWithOneID(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "prd.json", `{
  "project": "x",
  "userStories": [
    {"id": "US-1", "title": "One", "passes": false},
    {"id": "US-2", "title": "Two", "passes": false},

    {
      "id": "US-1",
      "title": "Another one",
      "passes": false
    }
  ]
}
`)
	before, err := os.ReadFile(filepath.Join(dir, "prd.json"))
	require.NoError(t, err)
	src, err := Open(Spec{Type: "prd"}, dir)
	require.NoError(t, err)

	_, err = src.Ready(ctx)
	hint := requireDuplicate(t, err, "US-1", "prd.json", "userStories[0] on line 4", "userStories[2] on line 7")
	assert.EqualError(t, err, `2 stories in prd.json have the id "US-1" (userStories[0] on line 4, userStories[2] on line 7)`)
	assert.Contains(t, hint, "give each story in prd.json an id of its own")

	// Nothing acts on an ambiguous file, not even on a story of another id.
	_, err = src.Show(ctx, "US-1")
	requireDuplicate(t, err, "US-1", "prd.json", "userStories[0] on line 4", "userStories[2] on line 7")
	require.Error(t, src.Close(ctx, "US-2", "merged"))
	require.Error(t, src.Fail(ctx, "US-1", "broken"))
	after, err := os.ReadFile(filepath.Join(dir, "prd.json"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the file is as it was")
}

func TestStoryLinesOfAnyLayout(t *testing.T) {
	assert.Equal(t, []int{1, 1}, storyLines([]byte(`{"userStories":[{"id":"a"},{"id":"b"}]}`)))
	assert.Equal(t, []int{3, 4}, storyLines([]byte("{\"other\": [1, {\"x\": 2}],\n \"userStories\": [\n  {\"id\": \"a\"}\n  , {\"id\": \"b\"}]}")))
	assert.Nil(t, storyLines([]byte(`["not an object"]`)))
	// Without lines, the index alone says where.
	err := (&prdSource{path: "p.json"}).checkUnique([]byte(`{}`), []prdStory{{ID: "a"}, {ID: "a"}})
	requireDuplicate(t, err, "a", "p.json", "userStories[0]", "userStories[1]")
}

func TestCommandListRefusesTwoTasksWithOneID(t *testing.T) {
	_, err := parseCommandList([]byte("{\"id\": \"a\"}\n{\"id\": \"b\"}\n\n{\"id\": \"a\"}\n"))
	requireDuplicate(t, err, "a", "its output", "line 1", "line 4")
	_, err = parseCommandList([]byte(`[{"id": 7}, {"id": "7"}, {"id": 8}]`))
	requireDuplicate(t, err, "7", "its output", "task 1", "task 2")

	dir := t.TempDir()
	writeFile(t, dir, "tasks.jsonl", "{\"id\": \"x-1\", \"title\": \"One\"}\n{\"id\": \"x-1\", \"title\": \"Two\"}\n")
	src, err := Open(Spec{Type: "command", List: "cat tasks.jsonl", Close: "touch closed-$RALPH_TASK_ID"}, dir)
	require.NoError(t, err)
	_, err = src.Ready(ctx)
	requireDuplicate(t, err, "x-1", "its output", "line 1", "line 2")
	assert.EqualError(t, err, `autopilot.source list (cat tasks.jsonl): 2 tasks in its output have the id "x-1" (line 1, line 2)`)
	require.Error(t, src.Close(ctx, "x-1", "merged"))
	assert.NoFileExists(t, filepath.Join(dir, "closed-x-1"), "no command runs for an ambiguous id")
}

// tk lists a ticket by the id in its front matter but finds one by its
// file name: a ticket file copied by hand shows the original's id twice.
func TestTkRefusesTwoTicketsWithOneID(t *testing.T) {
	fakestest.UsePath(t)
	dir := t.TempDir()
	first := run(t, dir, "tk", "create", "First", "-p", "1")
	second := run(t, dir, "tk", "create", "Second", "-p", "2")
	data, err := os.ReadFile(filepath.Join(dir, ".tickets", first+".md"))
	require.NoError(t, err)
	writeFile(t, dir, ".tickets/copy.md", strings.Replace(string(data), "# First", "# A copy of First", 1))
	src, err := Open(Spec{Type: "tk"}, dir)
	require.NoError(t, err)

	_, err = src.Ready(ctx)
	hint := requireDuplicate(t, err, first, ".tickets", ".tickets/"+first+".md", ".tickets/copy.md")
	assert.Contains(t, hint, "set id: copy in .tickets/copy.md")
	err = src.Close(ctx, second, "merged")
	requireDuplicate(t, err, first, ".tickets", ".tickets/"+first+".md", ".tickets/copy.md")
	assert.NotContains(t, run(t, dir, "tk", "show", second), "status: closed", "nothing changes while two tickets share an id")

	// Each with its own id, the copy is a ticket like any other.
	writeFile(t, dir, ".tickets/copy.md", strings.Replace(string(data), "id: "+first, "id: copy", 1))
	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{first, second, "copy"}, ids(ready))
}

func TestTkListRefusesAnIDTwice(t *testing.T) {
	_, err := parseTkList([]byte("dr-a  [P0][open] - A\ndr-b  [P1][open] - B\ndr-a  [P2][open] - A again\n"), "tk ready")
	requireDuplicate(t, err, "dr-a", "the output of tk ready", "line 1", "line 3")
}

func TestBeadsRefusesAnIDListedTwice(t *testing.T) {
	bin := t.TempDir()
	writeFile(t, bin, "bd", "#!/bin/sh\necho '[{\"id\": \"b-1\", \"title\": \"One\"}, {\"id\": \"b-2\"}, {\"id\": \"b-1\", \"title\": \"Again\"}]'\n")
	require.NoError(t, os.Chmod(filepath.Join(bin, "bd"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	src, err := Open(Spec{Type: "beads"}, t.TempDir())
	require.NoError(t, err)
	_, err = src.Ready(ctx)
	requireDuplicate(t, err, "b-1", "the output of bd ready --json --limit 0", "issue 1", "issue 3")
}

// A checklist makes its ids itself, one of its own for every box, however
// alike their texts are.
func TestChecklistIDsAreUnique(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "TODO.md", "- [ ] Two 2\n- [ ] Two\n- [x] Two\n- [ ] two!\n- [ ] Two-2\n"+
		"- [ ] "+strings.Repeat("x", 45)+"\n- [ ] "+strings.Repeat("x", 50)+"\n")
	src, err := Open(Spec{Type: "checklist"}, dir)
	require.NoError(t, err)
	_, items, err := src.(*checklistSource).read()
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, it := range items {
		assert.False(t, seen[it.task.ID], "%s is given twice", it.task.ID)
		seen[it.task.ID] = true
	}
	assert.Len(t, seen, 7)
	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Len(t, ready, 6)
}

// Boxes of one text are numbered in file order, each taking the lowest
// number no earlier box has, also when a box's own text is such a
// number; thousands of them are numbered without trying every taken
// number again for each.
func TestChecklistNumbersBoxesOfOneText(t *testing.T) {
	text := "- [ ] Fix it\n- [ ] Fix it 3\n- [ ] Fix it\n- [ ] Fix it\n- [ ] Fix it 5\n- [ ] Fix it\n- [ ] Fix it 3\n"
	var got []string
	for _, it := range parseChecklist([]byte(text)) {
		got = append(got, it.task.ID)
	}
	assert.Equal(t, []string{"fix-it", "fix-it-3", "fix-it-2", "fix-it-4", "fix-it-5", "fix-it-6", "fix-it-3-2"}, got)

	const n = 5000
	items := parseChecklist([]byte(strings.Repeat("- [ ] Fix it\n", n)))
	require.Len(t, items, n)
	assert.Equal(t, "fix-it-"+strconv.Itoa(n), items[n-1].task.ID)
}
