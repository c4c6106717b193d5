package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Write the CSV encoder":      "write-the-csv-encoder",
		"  --Fix: `tk ready` (P0)!":  "fix-tk-ready-p0",
		"Überprüfe die Größe":        "uberprufe-die-grosse",
		"Ünïcödé ✓ task":             "unicode-task",
		"Søren's Æble, Łódź":         "soren-s-aeble-lodz",
		"Задача 1":                   "1",
		"!!!":                        "task",
		"":                           "task",
		strings.Repeat("abcde ", 20): "abcde-abcde-abcde-abcde-abcde-abcde-abcd",
		"a234567890123456789012345678901234567890-tail": "a234567890123456789012345678901234567890",
		"a23456789012345678901234567890123456789 tail":  "a23456789012345678901234567890123456789",
	} {
		got := slug(in)
		assert.Equal(t, want, got, "%q", in)
		assert.LessOrEqual(t, len(got), slugMax)
		assert.NoError(t, ValidID(got))
	}
}

func TestChecklistParsing(t *testing.T) {
	doc := "# TODO\n\n" +
		"Some prose with - [ ] a box in a sentence.\n\n" +
		"- [ ] Fix the bug\n" +
		"  It crashes on empty input.\n" +
		"\n" +
		"      stack trace, indented\n" +
		"  - not a box: part of the description\n" +
		"  - [ ] `go test ./...`\n" +
		"  - [x] $ go vet ./...\n" +
		"- [X] Fix the bug\n" +
		"1. [ ] Fix the bug\n" +
		"\t- [ ] nested under a numbered item\n" +
		"Paragraph that ends the list.\n" +
		"```md\n- [ ] an example, not a task\n```\n" +
		"* [ ]\n" +
		"  - [ ] Deep\n" +
		"    - [ ] deeper, still a criterion of Deep's parent\n"
	items := parseChecklist([]byte(doc))
	var got []Task
	for _, it := range items {
		got = append(got, it.task)
	}
	require.Len(t, got, 4)
	assert.Equal(t, Task{
		ID: "fix-the-bug", Title: "Fix the bug", Status: "open",
		Description: "It crashes on empty input.\n\n    stack trace, indented\n- not a box: part of the description",
		Criteria:    []Criterion{{Text: "`go test ./...`", Command: "go test ./..."}, {Text: "$ go vet ./...", Command: "go vet ./..."}},
	}, got[0])
	assert.Equal(t, Task{ID: "fix-the-bug-2", Title: "Fix the bug", Status: "done", Closed: true}, got[1])
	assert.Equal(t, "fix-the-bug-3", got[2].ID)
	assert.Equal(t, []Criterion{{Text: "nested under a numbered item"}}, got[2].Criteria)
	assert.Equal(t, "task", got[3].ID, "an empty box")
	assert.Equal(t, []Criterion{{Text: "Deep"}, {Text: "deeper, still a criterion of Deep's parent"}}, got[3].Criteria)
}

func TestChecklistCloseChangesOnlyTheBox(t *testing.T) {
	dir := t.TempDir()
	doc := "# TODO\r\n\r\n- [ ] First  \r\n  - [ ] its check\r\n- [ ] Second\r\n\tno newline at the end"
	path := filepath.Join(dir, "TODO.md")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	src, err := Open(Spec{Type: "checklist"}, dir)
	require.NoError(t, err)

	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"first", "second"}, ids(ready))
	assert.Equal(t, "no newline at the end", ready[1].Description)

	require.NoError(t, src.Close(ctx, "second", "merged"))
	require.NoError(t, src.Close(ctx, "second", "again: already done, nothing to do"))
	require.NoError(t, src.Fail(ctx, "first", "no"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(doc, "- [ ] Second", "- [x] Second", 1), string(data))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the file keeps its mode")

	_, err = src.Show(ctx, "third")
	assert.ErrorIs(t, err, ErrNoTask)
	_, err = Open(Spec{Type: "checklist", Path: "missing.md"}, dir)
	require.NoError(t, err)
	missing, _ := Open(Spec{Type: "checklist", Path: "missing.md"}, dir)
	_, err = missing.Ready(ctx)
	assert.ErrorContains(t, err, "missing.md does not exist")
}

func TestPrdKeepsTheFileAsItWas(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prd.json")
	doc := `{"zeta": 1, "project": "x <&>", "userStories": [
  {"title": "B", "id": "US-2", "passes": false, "priority": 1.0, "extra": {"z": [1, 2], "a": null}},
  {"id": "US-1", "title": "A", "priority": 1, "passes": false, "notes": "Ask Ana first.\nralph: failed: old", "acceptanceCriteria": []},
  {"id": "US-0", "title": "Done", "priority": 0, "passes": true}
], "alpha": "\u00e9"}`
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	src, err := Open(Spec{Type: "prd"}, dir)
	require.NoError(t, err)

	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"US-2", "US-1"}, ids(ready), "ties in file order; passing stories are not ready")
	done, err := src.Show(ctx, "US-0")
	require.NoError(t, err)
	assert.True(t, done.Closed)

	require.NoError(t, src.Close(ctx, "US-2", "merged"))
	require.NoError(t, src.Fail(ctx, "US-1", "tests <failed> & more"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{
  "zeta": 1,
  "project": "x <&>",
  "userStories": [
    {
      "title": "B",
      "id": "US-2",
      "passes": true,
      "priority": 1.0,
      "extra": {
        "z": [
          1,
          2
        ],
        "a": null
      }
    },
    {
      "id": "US-1",
      "title": "A",
      "priority": 1,
      "passes": false,
      "notes": "Ask Ana first.\nralph: failed: tests <failed> & more",
      "acceptanceCriteria": []
    },
    {
      "id": "US-0",
      "title": "Done",
      "priority": 0,
      "passes": true
    }
  ],
  "alpha": "\u00e9"
}
`, string(data))

	// Failing again replaces ralph's verdict only; a story without notes
	// gains them at the end.
	require.NoError(t, src.Fail(ctx, "US-1", "again"))
	st, err := src.Show(ctx, "US-1")
	require.NoError(t, err)
	assert.False(t, st.Closed)
	data, _ = os.ReadFile(path)
	assert.Contains(t, string(data), `"notes": "Ask Ana first.\nralph: failed: again"`)

	assert.ErrorIs(t, src.Close(ctx, "US-9", ""), ErrNoTask)
	require.NoError(t, os.WriteFile(path, []byte("{\n  \"userStories\": [\n    {\"id\": \"a\",}\n  ]\n}\n"), 0o644))
	_, err = src.Ready(ctx)
	assert.ErrorContains(t, err, "prd.json: line 3, column 16")
}
