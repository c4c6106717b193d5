package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakes/fakestest"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// A tracker's data for the conformance suite, by name:
//
//	encoder  P0  component:cli; criteria `go test ./...` and a sentence
//	export   P1  component:cli, feature
//	readme   P1  (a tie with export)
//	document P2  waits for export (where the tracker has dependencies)
type fixture struct {
	name string
	// setup writes the data into dir and returns the source and the
	// tracker's id of each task by name.
	setup func(t *testing.T, dir string) (Source, map[string]string)
	// tiesByID: ties in priority come by id; otherwise in file order.
	tiesByID bool
	// deps: the tracker has dependencies.
	deps bool
	// tags: the tracker has tags.
	tags bool
	// failed checks that Fail recorded the reason, where it can.
	failed func(t *testing.T, dir, id string)
}

var ctx = context.Background()

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var stderr string
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), stderr)
	return strings.TrimSpace(string(out))
}

func fixtures() []fixture {
	return []fixture{
		{
			name: "tk", tiesByID: true, deps: true, tags: true,
			setup: func(t *testing.T, dir string) (Source, map[string]string) {
				ids := map[string]string{
					"export": run(t, dir, "tk", "create", "Add the export command", "-p", "1",
						"-d", "Users need to export data as CSV.", "--acceptance", "ralph export writes a CSV",
						"--tags", "component:cli,feature"),
					"encoder": run(t, dir, "tk", "create", "Write the CSV encoder", "-p", "0",
						"-d", "An encoder with RFC 4180 quoting.",
						"--acceptance", "- `go test ./...`\n- quotes fields with commas", "--tags", "component:cli"),
					"readme":   run(t, dir, "tk", "create", "Write the README", "-p", "1", "-d", "What ralph is."),
					"document": run(t, dir, "tk", "create", "Document export", "-d", "README section."),
				}
				run(t, dir, "tk", "dep", ids["document"], ids["export"])
				src, err := Open(Spec{Type: "tk"}, dir)
				require.NoError(t, err)
				return src, ids
			},
			failed: func(t *testing.T, dir, id string) {
				data, err := os.ReadFile(filepath.Join(dir, ".tickets", id+".md"))
				require.NoError(t, err)
				assert.Contains(t, string(data), "ralph: failed: the tests failed")
				assert.Contains(t, string(data), "status: open")
			},
		},
		beadsFixture("beads", ""),
		beadsFixture("beads-envelope", "1"),
		{
			name: "prd",
			setup: func(t *testing.T, dir string) (Source, map[string]string) {
				writeFile(t, dir, "prd.json", `{
  "project": "ralph",
  "branchName": "ralph/export",
  "userStories": [
    {"id": "US-002", "title": "Add the export command", "description": "Users need to export data as CSV.",
     "acceptanceCriteria": ["ralph export writes a CSV"], "priority": 1, "passes": false, "notes": "",
     "tags": ["component:cli", "feature"]},
    {"id": "US-001", "title": "Write the CSV encoder", "description": "An encoder with RFC 4180 quoting.",
     "acceptanceCriteria": ["`+"`go test ./...`"+`", "quotes fields with commas"], "priority": 0, "passes": false,
     "tags": ["component:cli"]},
    {"id": "US-003", "title": "Write the README", "description": "What ralph is.", "priority": 1, "passes": false},
    {"id": "US-004", "title": "Document export", "description": "README section.", "priority": 2, "passes": false,
     "dependsOn": ["US-002"]}
  ]
}
`)
				src, err := Open(Spec{Type: "prd"}, dir)
				require.NoError(t, err)
				return src, map[string]string{"export": "US-002", "encoder": "US-001", "readme": "US-003", "document": "US-004"}
			},
			deps: true, tags: true,
			failed: func(t *testing.T, dir, id string) {
				data, err := os.ReadFile(filepath.Join(dir, "prd.json"))
				require.NoError(t, err)
				assert.Contains(t, string(data), `"notes": "ralph: failed: the tests failed"`)
			},
		},
		{
			name: "checklist",
			setup: func(t *testing.T, dir string) (Source, map[string]string) {
				writeFile(t, dir, "TODO.md", "# Plan\n\n"+
					"- [ ] Write the CSV encoder\n"+
					"  An encoder with RFC 4180 quoting.\n"+
					"  - [ ] `go test ./...`\n"+
					"  - [ ] quotes fields with commas\n"+
					"- [ ] Add the export command\n"+
					"  Users need to export data as CSV.\n"+
					"  - [ ] ralph export writes a CSV\n"+
					"- [x] Set up the repository\n"+
					"* [ ] Write the README\n"+
					"  What ralph is.\n")
				src, err := Open(Spec{Type: "checklist"}, dir)
				require.NoError(t, err)
				return src, map[string]string{"encoder": "write-the-csv-encoder", "export": "add-the-export-command", "readme": "write-the-readme"}
			},
		},
		commandFixture("command", ""),
		// show prints one task: a line of the file, or nothing.
		commandFixture("command-show", `grep -F "\"id\":\"$RALPH_TASK_ID\"," tasks.jsonl || true`),
	}
}

func commandFixture(name, show string) fixture {
	return fixture{
		name: name, deps: true, tags: true,
		setup: func(t *testing.T, dir string) (Source, map[string]string) {
			writeFile(t, dir, "tasks.jsonl", strings.Join([]string{
				`{"id":"t-2","title":"Add the export command","description":"Users need to export data as CSV.","priority":1,"labels":["component:cli","feature"],"acceptance_criteria":"ralph export writes a CSV","status":"open"}`,
				`{"id":"t-1","title":"Write the CSV encoder","description":"An encoder with RFC 4180 quoting.","priority":0,"tags":["component:cli"],"acceptance_criteria":["` + "`go test ./...`" + `","quotes fields with commas"],"status":"open"}`,
				`{"id":"t-3","title":"Write the README","description":"What ralph is.","priority":1,"status":"open"}`,
				`{"id":"t-4","title":"Document export","description":"README section.","priority":2,"deps":["t-2"],"status":"open"}`,
			}, "\n")+"\n")
			set := func(status string) string {
				return `sed "/\"id\":\"$RALPH_TASK_ID\"/s/\"status\":\"[a-z_]*\"/\"status\":\"` + status + `\"/" tasks.jsonl > tasks.tmp && mv tasks.tmp tasks.jsonl`
			}
			src, err := Open(Spec{Type: "command", List: "cat tasks.jsonl", Show: show, Claim: set("in_progress"), Close: set("closed"),
				Fail: set("open") + ` && echo "$RALPH_TASK_ID: $RALPH_TASK_REASON" >> failures.log`}, dir)
			require.NoError(t, err)
			return src, map[string]string{"export": "t-2", "encoder": "t-1", "readme": "t-3", "document": "t-4"}
		},
		failed: func(t *testing.T, dir, id string) {
			data, err := os.ReadFile(filepath.Join(dir, "failures.log"))
			require.NoError(t, err)
			assert.Equal(t, id+": the tests failed\n", string(data))
		},
	}
}

func beadsFixture(name, envelope string) fixture {
	return fixture{
		name: name, tiesByID: true, deps: true, tags: true,
		setup: func(t *testing.T, dir string) (Source, map[string]string) {
			t.Setenv("FAKE_BD_ENVELOPE", envelope)
			run(t, dir, "bd", "init")
			create := func(args ...string) string {
				var v struct {
					ID string `json:"id"`
				}
				require.NoError(t, json.Unmarshal([]byte(run(t, dir, "bd", append([]string{"create"}, append(args, "--json")...)...)), &v))
				return v.ID
			}
			ids := map[string]string{
				"export": create("Add the export command", "-p", "1", "-d", "Users need to export data as CSV.",
					"--acceptance", "ralph export writes a CSV", "--labels", "component:cli,feature"),
				"encoder": create("Write the CSV encoder", "-p", "0", "-d", "An encoder with RFC 4180 quoting.",
					"--acceptance", "1. `go test ./...`\n2. quotes fields with commas", "--labels", "component:cli"),
				"readme":   create("Write the README", "-p", "1", "-d", "What ralph is."),
				"document": create("Document export", "-d", "README section."),
			}
			run(t, dir, "bd", "dep", "add", ids["document"], ids["export"])
			src, err := Open(Spec{Type: "beads"}, dir)
			require.NoError(t, err)
			return src, ids
		},
		failed: func(t *testing.T, dir, id string) {
			var shown []struct {
				Notes  string `json:"notes"`
				Status string `json:"status"`
			}
			out := run(t, dir, "bd", "show", id, "--json")
			if envelope != "" {
				var env struct {
					Data json.RawMessage `json:"data"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &env))
				out = string(env.Data)
			}
			require.NoError(t, json.Unmarshal([]byte(out), &shown))
			require.Len(t, shown, 1)
			assert.Equal(t, "ralph: failed: the tests failed", shown[0].Notes)
			assert.Equal(t, "open", shown[0].Status)
		},
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	gittest.WriteFile(t, dir, name, content)
}

// snapshot reads every file under the source's Files.
func snapshot(t *testing.T, dir string, paths []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		_ = filepath.WalkDir(filepath.Join(dir, p), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				out[path] = string(data)
			}
			return nil
		})
	}
	return out
}

func ids(ts []Task) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestConformance(t *testing.T) {
	fakestest.UsePath(t)
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			src, id := f.setup(t, dir)
			assert.Equal(t, strings.TrimSuffix(strings.TrimSuffix(f.name, "-envelope"), "-show"), src.Name())
			for _, tid := range id {
				require.NoError(t, ValidID(tid))
			}

			// Ready: priority order, ties by id or in file order; a task
			// that waits for an open one is not ready.
			ready, err := src.Ready(ctx)
			require.NoError(t, err)
			want := []string{id["encoder"], id["export"], id["readme"]} // file order
			if f.tiesByID {
				ties := []string{id["export"], id["readme"]}
				sort.Strings(ties)
				want = append([]string{id["encoder"]}, ties...)
			}
			require.Equal(t, want, ids(ready))
			if f.name != "checklist" {
				assert.Equal(t, []int{0, 1, 1}, []int{ready[0].Priority, ready[1].Priority, ready[2].Priority})
			}

			// Show: title, description, criteria (one a command), tags.
			enc, err := src.Show(ctx, id["encoder"])
			require.NoError(t, err)
			assert.Equal(t, id["encoder"], enc.ID)
			assert.Equal(t, "Write the CSV encoder", enc.Title)
			assert.Equal(t, "An encoder with RFC 4180 quoting.", enc.Description)
			assert.False(t, enc.Closed)
			assert.Equal(t, []Criterion{
				{Text: "`go test ./...`", Command: "go test ./..."},
				{Text: "quotes fields with commas"},
			}, enc.Criteria)
			if f.tags {
				assert.Equal(t, []string{"component:cli"}, enc.Tags)
				assert.Equal(t, []string{"cli"}, enc.Components())
				exp, err := src.Show(ctx, id["export"])
				require.NoError(t, err)
				assert.Equal(t, []string{"component:cli", "feature"}, exp.Tags)
				assert.Equal(t, []Criterion{{Text: "ralph export writes a CSV"}}, exp.Criteria)
			}
			assert.Equal(t, enc, ready[0], "Ready gives what Show gives")

			// Dependencies.
			if f.deps {
				doc, err := src.Show(ctx, id["document"])
				require.NoError(t, err)
				assert.Equal(t, []string{id["export"]}, doc.Deps)
				// Every source with dependencies lists the blocked tasks,
				// for the dry run's plan.
				b, ok := src.(Blocker)
				require.True(t, ok, "%s lists its blocked tasks", f.name)
				blocked, err := b.Blocked(ctx)
				require.NoError(t, err)
				require.Equal(t, []string{id["document"]}, ids(blocked))
				assert.Equal(t, []string{id["export"]}, blocked[0].Deps)
				assert.Equal(t, "Document export", blocked[0].Title)
				// A source that splits them in one read gives both as
				// they are.
				if sp, ok := src.(Splitter); ok {
					r, bl, err := sp.Split(ctx)
					require.NoError(t, err)
					assert.Equal(t, ready, r)
					assert.Equal(t, blocked, bl)
				}
			}

			// Claim, then Close: the task is no longer ready, Show says
			// closed, and the tracker's files changed.
			require.NoError(t, src.Claim(ctx, id["encoder"]))
			before := snapshot(t, dir, src.Files())
			require.NoError(t, src.Close(ctx, id["encoder"], "merged in abc123"))
			ready, err = src.Ready(ctx)
			require.NoError(t, err)
			assert.NotContains(t, ids(ready), id["encoder"])
			enc, err = src.Show(ctx, id["encoder"])
			require.NoError(t, err)
			assert.True(t, enc.Closed, "status %q", enc.Status)
			if len(src.Files()) > 0 {
				assert.NotEqual(t, before, snapshot(t, dir, src.Files()), "Close changed nothing in %v", src.Files())
			}

			// Fail: recorded where the tracker can hold it; the task stays
			// (or is again) ready.
			require.NoError(t, src.Claim(ctx, id["export"]))
			require.NoError(t, src.Fail(ctx, id["export"], "the tests failed"))
			if f.failed != nil {
				f.failed(t, dir, id["export"])
			}
			ready, err = src.Ready(ctx)
			require.NoError(t, err)
			assert.Contains(t, ids(ready), id["export"])

			// Closing what a task waits for makes it ready.
			if f.deps {
				require.NoError(t, src.Close(ctx, id["export"], "merged in def456"))
				ready, err = src.Ready(ctx)
				require.NoError(t, err)
				assert.Equal(t, []string{id["readme"], id["document"]}, ids(ready))
				doc, err := src.Show(ctx, id["document"])
				require.NoError(t, err)
				assert.Empty(t, doc.Deps)
			}

			// An unknown id is an error, and no change.
			for _, unknown := range []string{"nope-0000", id["readme"][:len(id["readme"])-1]} {
				_, err = src.Show(ctx, unknown)
				assert.ErrorIs(t, err, ErrNoTask, "Show %s", unknown)
				assert.ErrorIs(t, src.Claim(ctx, unknown), ErrNoTask, "Claim %s", unknown)
				assert.ErrorIs(t, src.Close(ctx, unknown, "x"), ErrNoTask, "Close %s", unknown)
				assert.ErrorIs(t, src.Fail(ctx, unknown, "x"), ErrNoTask, "Fail %s", unknown)
			}
			readme, err := src.Show(ctx, id["readme"])
			require.NoError(t, err)
			assert.False(t, readme.Closed, "a partial id changed the task it is part of")
		})
	}
}
