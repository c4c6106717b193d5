package tasks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakes/fakestest"
)

// fixtureOutput is what the nth command (from 0) of a captured fixture
// printed: the lines after its "$ " line, up to the next command, without
// bd's "[exit N]" line.
func fixtureOutput(t *testing.T, name string, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var outs [][]string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "$ "):
			outs = append(outs, nil)
		case strings.HasPrefix(l, "[exit "):
		case len(outs) > 0:
			outs[len(outs)-1] = append(outs[len(outs)-1], l)
		}
	}
	require.Greater(t, len(outs), n, "%s has %d commands", name, len(outs))
	return strings.Join(outs[n], "")
}

func TestParseTkReadyAndBlocked(t *testing.T) {
	got, err := parseTkList([]byte(fixtureOutput(t, "tk/ready.txt", 0)), "tk ready")
	require.NoError(t, err)
	assert.Equal(t, []Task{
		{ID: "dr-ep7r", Priority: 0, Status: "open", Title: "Write the CSV encoder"},
		{ID: "dr-qhah", Priority: 1, Status: "open", Title: "Add the export command"},
	}, got)

	// tk ready lists in_progress tickets too.
	got, err = parseTkList([]byte(fixtureOutput(t, "tk/lifecycle.txt", 1)), "tk ready")
	require.NoError(t, err)
	assert.Equal(t, "in_progress", got[0].Status)

	got, err = parseTkList([]byte(fixtureOutput(t, "tk/lifecycle.txt", 6)), "tk blocked")
	require.NoError(t, err)
	assert.Equal(t, []Task{{ID: "dr-nc1l", Priority: 2, Status: "open", Title: "Document export", Deps: []string{"dr-qhah"}}}, got)

	// An id longer than the %-8s padding has one space; a title may hold
	// " - " and brackets.
	got, err = parseTkList([]byte("abcd-ef12345 [P3][open] - Fix [x] - and <- [y]\nab-1 [P0][open] - B <- [ab-2, ab-3]\n"), "tk blocked")
	require.NoError(t, err)
	assert.Equal(t, "Fix [x] - and", got[0].Title)
	assert.Equal(t, []string{"y"}, got[0].Deps)
	assert.Equal(t, []string{"ab-2", "ab-3"}, got[1].Deps)

	_, err = parseTkList([]byte("dr-ep7r  [P0][open] - A\nNo tickets\n"), "tk ready")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 2, "No tickets"`)
}

func TestParseTkShow(t *testing.T) {
	got, err := parseTkShow([]byte(fixtureOutput(t, "tk/show.txt", 0)))
	require.NoError(t, err)
	assert.Equal(t, Task{
		ID: "dr-qhah", Title: "Add the export command", Description: "Users need to export data as CSV.",
		Priority: 1, Status: "open", Tags: []string{"component:cli", "feature"},
		Criteria: []Criterion{{Text: "ralph export writes a CSV"}},
	}, got, "## Blocking is not part of the description")

	got, err = parseTkShow([]byte(fixtureOutput(t, "tk/show-with-dep.txt", 0)))
	require.NoError(t, err)
	assert.Equal(t, []string{"dr-qhah"}, got.Deps)
	assert.Equal(t, "README section.", got.Description)
	assert.Empty(t, got.Tags)
	assert.Equal(t, 2, got.Priority)

	data, err := os.ReadFile("testdata/tk/ticket-file-closed.md")
	require.NoError(t, err)
	got, err = parseTkShow(data)
	require.NoError(t, err)
	assert.True(t, got.Closed)
	assert.Equal(t, "An encoder with RFC 4180 quoting.", got.Description, "## Notes is not part of the description")

	// A dep that is closed is not listed under ## Blockers, and not a Dep;
	// sections of the user's own stay in the description.
	got, err = parseTkShow([]byte("---\nid: a-1\nstatus: open\ndeps: [a-2, a-3]\n---\n# T\n\nBody.\n\n## Design\n\nA plan.\n\n" +
		"## Acceptance Criteria\n\n- [ ] `make test`\n- $ go vet ./...\n- works\n  on two lines\n\n## Blockers\n\n- a-3 [in_progress] Other\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a-3"}, got.Deps)
	assert.Equal(t, "Body.\n\n## Design\n\nA plan.", got.Description)
	assert.Equal(t, []Criterion{
		{Text: "`make test`", Command: "make test"},
		{Text: "$ go vet ./...", Command: "go vet ./..."},
		{Text: "works on two lines"},
	}, got.Criteria)

	for _, bad := range []string{"", "no front matter\n", "---\nid: a\n", "---\nstatus: open\n---\n# T\n", "---\nid: a\npriority: high\n---\n"} {
		_, err := parseTkShow([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestParseBeads(t *testing.T) {
	got, err := parseBeadsList([]byte(fixtureOutput(t, "bd/ready-json.txt", 0)))
	require.NoError(t, err)
	require.Len(t, got, 2)
	tk := got[1].task()
	assert.Equal(t, Task{
		ID: "demo-repo-rn4", Title: "Add the export command", Description: "Users need to export data as CSV.",
		Priority: 1, Status: "open", Tags: []string{"component:cli", "feature"},
		Criteria: []Criterion{{Text: "ralph export writes a CSV"}},
	}, tk)
	assert.Equal(t, 0, got[0].task().Priority, "priority 0 is not bd's default 2")

	// show is an array of one; create one object with schema_version;
	// update and close an array.
	for _, f := range []struct {
		file string
		n    int
	}{{"bd/show-json.txt", 0}, {"bd/create-json.txt", 0}, {"bd/lifecycle-json.txt", 0}, {"bd/lifecycle-json.txt", 2}} {
		got, err := parseBeadsList([]byte(fixtureOutput(t, f.file, f.n)))
		require.NoError(t, err, "%s #%d", f.file, f.n)
		require.Len(t, got, 1, "%s #%d", f.file, f.n)
	}
	closed, _ := parseBeadsList([]byte(fixtureOutput(t, "bd/lifecycle-json.txt", 2)))
	assert.True(t, closed[0].task().Closed)

	// Other versions' envelope, around a list or one issue.
	env := `{"schema_version": 2, "data": ` + fixtureOutput(t, "bd/ready-json.txt", 0) + `}`
	got, err = parseBeadsList([]byte(env))
	require.NoError(t, err)
	assert.Len(t, got, 2)
	got, err = parseBeadsList([]byte(`{"schema_version":2,"data":{"id":"x-1","title":"T","priority":3}}`))
	require.NoError(t, err)
	assert.Equal(t, 3, got[0].task().Priority)

	_, err = parseBeadsList([]byte(`{"schema_version":2,"data":null,"error":{"kind":"not_found"}}`))
	assert.ErrorContains(t, err, "not_found")
	_, err = parseBeadsList(nil)
	assert.ErrorContains(t, err, "printed nothing")
	_, err = parseBeadsList([]byte("○ demo-repo-4n7 ● P0 Write the CSV encoder\n"))
	assert.ErrorContains(t, err, "not a JSON array")

	// Dependencies: blocking ones that are not closed.
	got, err = parseBeadsList([]byte(`[{"id":"a-1","title":"T","dependencies":[
		{"id":"a-2","status":"open","dependency_type":"blocks"},
		{"id":"a-3","status":"closed","dependency_type":"blocks"},
		{"id":"a-4","status":"open","dependency_type":"parent-child"}]}]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a-2"}, got[0].task().Deps)

	// Acceptance criteria as bd users write them.
	got, err = parseBeadsList([]byte(`[{"id":"a-1","title":"T","acceptance_criteria":"- [ ] one\n* two\n1. ` + "`go test ./...`" + `\n[ ] three\n\nfour"}]`))
	require.NoError(t, err)
	assert.Equal(t, []Criterion{{Text: "one"}, {Text: "two"}, {Text: "`go test ./...`", Command: "go test ./..."}, {Text: "[ ] three"}, {Text: "four"}}, got[0].task().Criteria)
}

func TestCriteria(t *testing.T) {
	for in, want := range map[string]Criterion{
		"`go test ./...`":              {Text: "`go test ./...`", Command: "go test ./..."},
		"``echo `x` ``":                {Text: "``echo `x` ``", Command: "echo `x`"},
		"$ make lint":                  {Text: "$ make lint", Command: "make lint"},
		"run `go test` to see":         {Text: "run `go test` to see"},
		"`a` and `b`":                  {Text: "`a` and `b`"},
		"``":                           {Text: "``"},
		"`unclosed":                    {Text: "`unclosed"},
		"$5 is the price":              {Text: "$5 is the price"},
		"costs $ nothing, `surprise`":  {Text: "costs $ nothing, `surprise`"},
		"  `  spaced  `  ":             {Text: "`  spaced  `", Command: "spaced"},
		"`go test ./...` passes again": {Text: "`go test ./...` passes again"},
	} {
		assert.Equal(t, want, criterionOf(in), "%q", in)
	}
	assert.Equal(t, []Criterion{{Text: "a"}, {Text: "b", Command: ""}, {Text: "`c`", Command: "c"}},
		criteriaOf([]string{"- a", "* [x] b", "1) `c`", "  ", "- "}))
	assert.Empty(t, parseCriteria("\n\n"))
	assert.Equal(t, []Criterion{{Text: "inside a fence"}, {Text: "after"}},
		parseCriteria("### Checks\n```\ninside a fence\n```\nafter"))
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"dr-qhah", "US-001", "bd-a1b2", "demo-repo-rn4", "write-the-csv-encoder-2", "a.b_c", strings.Repeat("x", 64)} {
		assert.NoError(t, ValidID(id), id)
	}
	for _, id := range []string{"../x", "a b", "-x", ".x", "x.lock", "a..b", strings.Repeat("x", 65), "", "a/b", "x.", "é", "a~1", "a:b", "a\nb"} {
		err := ValidID(id)
		assert.Error(t, err, "%q", id)
	}
	assert.ErrorContains(t, ValidID("a b"), `' '`)
	assert.ErrorContains(t, ValidID(""), "empty")
	assert.ErrorContains(t, ValidID("tâche-1"), "only ASCII letters (a-z, A-Z), digits", "ü is a letter, but not one a branch may hold")
}

func TestComponents(t *testing.T) {
	task := Task{Tags: []string{"feature", "component:api", "component:", "component:cli", "Component:x"}}
	assert.Equal(t, []string{"api", "cli"}, task.Components())
	assert.Empty(t, Task{}.Components())
}

func TestOpen(t *testing.T) {
	for _, spec := range []Spec{{}, {Type: "jira"}, {Type: "command"}, {Type: "command", List: "cat x"}} {
		_, err := Open(spec, t.TempDir())
		assert.Error(t, err, "%+v", spec)
	}
	src, err := Open(Spec{Type: "checklist"}, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, []string{"TODO.md"}, src.Files())
	src, err = Open(Spec{Type: "prd", Path: "docs/prd.json"}, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, []string{"docs/prd.json"}, src.Files())
	src, _ = Open(Spec{Type: "beads"}, t.TempDir())
	assert.Equal(t, []string{".beads"}, src.Files())
	assert.Equal(t, "bd", src.Tool())
	src, _ = Open(Spec{Type: "command", List: "x", Close: "y"}, t.TempDir())
	assert.Empty(t, src.Files())
	assert.Empty(t, src.Tool())
}

func TestTkFilesFollowTicketsDir(t *testing.T) {
	dir := t.TempDir()
	src, _ := Open(Spec{Type: "tk"}, dir)
	assert.Equal(t, []string{".tickets"}, src.Files())
	t.Setenv("TICKETS_DIR", "work/tickets")
	assert.Equal(t, []string{"work/tickets"}, src.Files())
	t.Setenv("TICKETS_DIR", filepath.Join(dir, "t"))
	assert.Equal(t, []string{"t"}, src.Files())
	t.Setenv("TICKETS_DIR", t.TempDir())
	assert.Empty(t, src.Files(), "tickets outside the repository are not its files")
}

func TestMissingToolSaysWhatToDo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, typ := range []string{"tk", "beads"} {
		src, _ := Open(Spec{Type: typ}, t.TempDir())
		_, err := src.Ready(ctx)
		assert.EqualError(t, err, src.Tool()+" not found on PATH: install it, or choose another autopilot.source")
	}
}

func TestAFailedCommandSaysWhy(t *testing.T) {
	dir := t.TempDir()
	src, err := Open(Spec{Type: "command", List: "echo one >&2; echo two >&2; exit 3", Close: "true"}, dir)
	require.NoError(t, err)
	_, err = src.Ready(ctx)
	assert.EqualError(t, err, `autopilot.source list: sh -c "echo one >&2; echo two >&2; exit 3" exited with status 3: one; two`)

	// tk's own errors come through with the command line.
	fakestest.UsePath(t)
	tkSrc, _ := Open(Spec{Type: "tk"}, dir)
	_, err = tkSrc.Show(ctx, "x-1")
	assert.ErrorIs(t, err, ErrNoTask)
	writeFile(t, dir, "junk", "")
	cmd := exec.Command("tk", "create", "A", "-p", "9")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, "Error: invalid priority '9'. Must be one of: 0 1 2 3 4\n", string(out))
}

func TestParseCommandList(t *testing.T) {
	got, err := parseCommandList([]byte(`[{"id": 7, "title": "T", "priority": 2, "labels": ["component:x"], "acceptance_criteria": "- a\n- $ make"}]`))
	require.NoError(t, err)
	assert.Equal(t, []Task{{ID: "7", Title: "T", Priority: 2, Tags: []string{"component:x"},
		Criteria: []Criterion{{Text: "a"}, {Text: "$ make", Command: "make"}}}}, got)

	for out, want := range map[string]string{
		"{\"id\":\"a\"}\nnot json\n":            `line 2 of its output, "not json", is not a JSON object`,
		"{\"id\":\"a\"}\n\n{\"title\":\"b\"}\n": "line 3: id must be a string or a number, not nothing",
		`[{"id":"a"},{"id":""}]`:                "task 2: the task has no id",
		`[{"id":"a",]`:                          "line 1, column 12",
		`[{"id":"a","acceptance_criteria":3}]`:  "acceptance_criteria must be a string or an array of strings",
	} {
		_, err := parseCommandList([]byte(out))
		assert.ErrorContains(t, err, want, "%q", out)
	}
	got, err = parseCommandList([]byte("  \n"))
	require.NoError(t, err)
	assert.Empty(t, got)
}

// With a show command, a command source shows, claims and closes a task
// without running its list: one task's look, not the whole backlog's,
// while Ready still lists. A task show does not print does not exist.
func TestCommandShowSparesTheList(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "tasks.jsonl", `{"id":"t-1","title":"One","status":"open","deps":["t-2"]}`+"\n"+
		`{"id":"t-2","title":"Two","status":"closed"}`+"\n"+`{"id":"t-3","title":"Three","status":"open"}`+"\n")
	src, err := Open(Spec{Type: "command", List: "echo list >> runs.log; cat tasks.jsonl",
		Show:  `echo "show $RALPH_TASK_ID" >> runs.log; grep -F "\"id\":\"$RALPH_TASK_ID\"," tasks.jsonl || true`,
		Claim: `echo "claim $RALPH_TASK_ID" >> runs.log`, Close: `echo "close $RALPH_TASK_ID" >> runs.log`}, dir)
	require.NoError(t, err)
	one, err := src.Show(ctx, "t-1")
	require.NoError(t, err)
	assert.Equal(t, "One", one.Title)
	assert.Empty(t, one.Deps, "t-2 is closed")
	require.NoError(t, src.Claim(ctx, "t-3"))
	require.NoError(t, src.Close(ctx, "t-3", "merged"))
	_, err = src.Show(ctx, "t-9")
	require.ErrorIs(t, err, ErrNoTask)
	require.ErrorIs(t, src.Close(ctx, "t-9", "merged"), ErrNoTask)
	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"t-1", "t-3"}, ids(ready))
	data, err := os.ReadFile(filepath.Join(dir, "runs.log"))
	require.NoError(t, err)
	assert.Equal(t, "show t-1\nshow t-2\nshow t-3\nclaim t-3\nshow t-3\nclose t-3\nshow t-9\nshow t-9\nlist\n", string(data))
}
