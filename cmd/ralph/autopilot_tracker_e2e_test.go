package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-loop/ralph/runfiles"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What the autopilot does with trackers that are not as it needs them and
// with what else the user's checkout holds.

// A tracker that gives two tasks one id is refused before anything runs,
// by the run and by the dry run alike, naming the id and where the two
// are: ralph knows a task by its id alone, and would otherwise run the
// first on every run and never the second.
func TestAutopilotRefusesTwoTasksWithOneID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		section string
		setUp   func(w *workspace) (want []string)
	}{
		{name: "prd", section: "  source: {type: prd, path: prd.json}\n",
			setUp: func(w *workspace) []string {
				w.write("prd.json", `{
  "userStories": [
    {"id": "US-001", "title": "One", "priority": 1, "passes": false},
    {"id": "US-002", "title": "Two", "priority": 2, "passes": false},
    {"id": "US-001", "title": "Three", "priority": 3, "passes": false}
  ]
}
`)
				return []string{`2 stories in prd.json have the id "US-001" (userStories[0] on line 3, userStories[2] on line 5)`,
					"ralph: hint: give each story in prd.json an id of its own"}
			}},
		{name: "command", section: "  source:\n    type: command\n    list: cat tasks.jsonl\n    close: 'echo $RALPH_TASK_ID >> closed.txt'\n",
			setUp: func(w *workspace) []string {
				w.write("tasks.jsonl", `{"id": "c-1", "title": "One"}`+"\n"+`{"id": "c-2", "title": "Two"}`+"\n"+`{"id": "c-1", "title": "Three"}`+"\n")
				return []string{`autopilot.source list (cat tasks.jsonl): 2 tasks in its output have the id "c-1" (line 1, line 3)`,
					"ralph: hint: make the list command print each task once"}
			}},
		{name: "tk", section: "  source: tk\n",
			setUp: func(w *workspace) []string {
				id := w.run("tk", "create", "One", "-p", "1")
				w.run("tk", "create", "Two", "-p", "2")
				// A ticket copied by hand keeps the original's id.
				w.write(".tickets/copy.md", strings.Replace(w.read(".tickets/"+id+".md"), "# One", "# Three", 1))
				return []string{`2 tickets in .tickets have the id "` + id + `" (.tickets/` + id + `.md, .tickets/copy.md)`,
					"ralph: hint: give each ticket an id of its own", "set id: copy in .tickets/copy.md"}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newAutopilotRepo(t, c.section)
			w.script(taskAgent("0"))
			want := c.setUp(w)
			git(t, w.dir, "add", "-A")
			git(t, w.dir, "commit", "-q", "-m", "tasks")
			before := snapshot(t, w.dir)
			for _, args := range [][]string{{"autopilot"}, {"autopilot", "--dry-run"}} {
				r := w.ralph(args...)
				assert.Equal(t, 3, r.code, "%v\nstdout:\n%s\nstderr:\n%s", args, r.stdout, r.stderr)
				for _, s := range want {
					assert.Contains(t, r.stderr, s, "%v", args)
				}
			}
			assert.Equal(t, before, snapshot(t, w.dir), "the repository and the tracker are byte for byte as they were")
			assert.NoDirExists(t, filepath.Join(w.dir, ".ralph"))
			assert.NoFileExists(t, filepath.Join(w.state, "times"), "no agent ran")
		})
	}
}

// A command tracker's claim and close change files ralph is not told of;
// ralph commits what they changed, each with its message, so that the
// checkout is clean after the run and the next run starts.
func TestAutopilotCommitsWhatACommandTrackerChanged(t *testing.T) {
	t.Parallel()
	// The tracker is a board of JSON files in the repository: claim and
	// close rewrite a task's file, close also appends to board/closed.log.
	const setStatus = `f=board/$RALPH_TASK_ID.json; sed "s/\"status\": \"[a-z_]*\"/\"status\": \"%s\"/" "$f" > "$f.new" && mv "$f.new" "$f"`
	section := func(extra string) string {
		return "  parallel: 2\n  source:\n    type: command\n    list: cat board/*.json\n" +
			"    claim: '" + strings.ReplaceAll(setStatus, "%s", "in_progress") + "'\n" +
			"    close: '" + strings.ReplaceAll(setStatus, "%s", "closed") + `; echo "$RALPH_TASK_ID" >> board/closed.log'` + "\n" + extra
	}
	addTask := func(w *workspace, id string) {
		w.write("board/"+id+".json", `{"id": "`+id+`", "title": "Task `+id+`", "status": "open"}`+"\n")
	}
	changedBy := func(w *workspace, subject string) string {
		hash := strings.TrimSpace(git(t, w.dir, "log", "--format=%H", "--fixed-strings", "--grep", subject, "main"))
		require.Len(t, strings.Fields(hash), 1, "one commit %q", subject)
		return strings.TrimSpace(git(t, w.dir, "show", "--name-only", "--format=", hash))
	}
	closedBy := func(w *workspace, id string) string {
		hashes := closeCommits(t, w.dir, "main", id)
		require.Len(t, hashes, 1, "one commit closes %s", id)
		return strings.TrimSpace(git(t, w.dir, "show", "--name-only", "--format=", hashes[0]))
	}

	t.Run("what each command changed", func(t *testing.T) {
		w := newAutopilotRepo(t, section(""))
		w.script(taskAgent("0"))
		addTask(w, "c-1")
		addTask(w, "c-2")
		git(t, w.dir, "add", "-A")
		git(t, w.dir, "commit", "-q", "-m", "the board")
		w.write("notes.txt", "my notes\n")

		r := w.ralph("autopilot")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Equal(t, "?? notes.txt", git(t, w.dir, "status", "--porcelain"), "the tracker's changes are committed; the user's notes are not")
		for _, id := range []string{"c-1", "c-2"} {
			assert.Equal(t, "board/"+id+".json", changedBy(w, "ralph: claim "+id))
			assert.Contains(t, closedBy(w, id), "board/"+id+".json")
			assert.Contains(t, closedBy(w, id), "board/closed.log")
			assert.Contains(t, w.read("board/"+id+".json"), `"status": "closed"`)
		}
		assert.ElementsMatch(t, []string{"c-1", "c-2"}, w.mergedOrder())

		// The next run starts, and takes the task added since.
		addTask(w, "c-3")
		git(t, w.dir, "add", "board/c-3.json")
		git(t, w.dir, "commit", "-q", "-m", "another task")
		r = w.ralph("autopilot")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Equal(t, []string{"c-3"}, w.mergedOrder()[2:])
		assert.Equal(t, "?? notes.txt", git(t, w.dir, "status", "--porcelain"))
		assert.Equal(t, "my notes\n", w.read("notes.txt"))
	})

	// With files:, what a run cut off between a command and its commit
	// left behind is committed when the next one starts.
	t.Run("files", func(t *testing.T) {
		w := newAutopilotRepo(t, section("    files: [board]\n"))
		w.script(taskAgent("0"))
		addTask(w, "c-1")
		git(t, w.dir, "add", "-A")
		git(t, w.dir, "commit", "-q", "-m", "the board")
		w.write("board/c-1.json", strings.Replace(w.read("board/c-1.json"), "open", "in_progress", 1))

		r := w.ralph("autopilot")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Equal(t, "board/c-1.json", changedBy(w, "ralph: record the tracker's changes before the autopilot starts"))
		assert.Contains(t, closedBy(w, "c-1"), "board/closed.log")
		w.assertCleanAfterRun("board")
	})
}

// Untracked files do not stop the autopilot: one in no merge's way stays
// as it is; one in the way of a merge's fast-forward is named when the
// merge lands, and that verified merge lands on the next run, once the
// file is out of the way.
func TestAutopilotLeavesUntrackedFilesAlone(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "- [ ] One\n- [ ] Two\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(taskAgent("0"))
	w.write("notes.txt", "my notes\n")
	w.write("one.txt", "my own one.txt\n") // the first task's agent writes one.txt

	r := w.ralph("autopilot")
	require.Equal(t, 3, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "ralph: error: the merge of one is verified, but main cannot move to it: "+
		"one.txt, untracked in this checkout, would be overwritten by the merge's own")
	assert.Contains(t, r.stderr, "ralph: hint: move one.txt out of the way (or delete it), then run ralph autopilot again")
	assert.Equal(t, "my own one.txt\n", w.read("one.txt"), "the user's file is as it was")
	assert.Equal(t, "my notes\n", w.read("notes.txt"))
	assert.Contains(t, w.read("TODO.md"), "- [ ] One", "not closed")
	st := readAutopilotState(t, w)
	assert.Empty(t, st.Failed, "the task did nothing wrong")
	assert.Nil(t, st.Ended, "the run goes on next time")
	require.NotEmpty(t, st.MergeQueue)
	assert.Equal(t, "one", st.MergeQueue[0].Task)
	assert.Equal(t, runfiles.MergeDone, st.MergeQueue[0].Step)

	require.NoError(t, os.Rename(filepath.Join(w.dir, "one.txt"), filepath.Join(w.dir, "my-one.txt")))
	r = w.ralph("autopilot")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, []string{"one", "two"}, w.mergedOrder(), "each merged once")
	assert.Equal(t, "one\n", w.read("one.txt"))
	assert.Contains(t, w.read("TODO.md"), "- [x] One\n- [x] Two")
	assert.Equal(t, "?? my-one.txt\n?? notes.txt", git(t, w.dir, "status", "--porcelain"))
	assert.Equal(t, "my notes\n", w.read("notes.txt"))
	assert.Len(t, w.agentTimes()["one"], 1, "the task's agent ran once")
}
