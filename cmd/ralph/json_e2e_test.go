package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonArgs are the arguments a command that prints JSON needs besides its
// flags, in the workspace TestEveryJSONOutputParses prepares. A command
// with a required argument that is missing here fails the test, by name.
var jsonArgs = map[string][]string{
	"hats show":      {"ralph"},
	"memory search":  {"migrations"},
	"memory add":     {"Run the migrations before the tests"},
	"memory rm":      {"<the memory to remove>"},
	"cluster pubkey": {"worker", "--seed", "<a seed made by cluster keygen>"},
	"inspect prompt": {"1"},
	"inspect output": {"1"},
	"inspect diff":   {"1"},
	"runs clean":     {"--max-age", "30d", "--dry-run"},
	"chain clean":    {"--max-age", "30d", "--dry-run"},
	"worktree diff":  {"json"},
	"chain run":      {"ralph.yml", "-p", "say you are done"},
}

// Every way ralph capabilities says a command prints JSON, but the
// streams of a run (--headless, which the headless contract tests hold),
// is run in a workspace with a finished run, a memory and a task queue,
// and its stdout parses as it says: one document, or JSON lines. The
// commands come from the contract, so a command added with --json is
// covered without a word here.
func TestEveryJSONOutputParses(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "# Work\n\n- [ ] One\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the work")
	w.script(agentScript{Steps: []step{say(tag("LOOP_COMPLETE", "done"))}})
	r := w.ralph("loop", "-p", "say you are done")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.ralph("loop", "--worktree", "json", "-p", "say you are done")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.ralph("memory", "add", "Run migrations with make migrate")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.ralph("memory", "add", "A memory to remove")
	require.Equal(t, 0, r.code, r.stderr)
	toRemove := strings.TrimSpace(r.stdout)
	seed := filepath.Join(t.TempDir(), "worker.nk")
	r = w.ralph("cluster", "keygen", "worker", "--seed", seed)
	require.Equal(t, 0, r.code, r.stderr)

	r = w.ralph("capabilities", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var caps capabilities
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &caps))
	ran := 0
	for _, c := range caps.Commands {
		for _, j := range c.JSON {
			if j.Flag == "--headless" {
				continue
			}
			args := append(strings.Fields(c.Path), jsonArgs[c.Path]...)
			switch c.Path {
			case "memory rm":
				args[len(args)-1] = toRemove
			case "cluster pubkey":
				args[len(args)-1] = seed
			}
			for _, a := range c.Args {
				if a.Required && len(jsonArgs[c.Path]) == 0 {
					t.Errorf("ralph %s needs its %s argument: add it to jsonArgs", c.Path, a.Name)
				}
			}
			for _, flag := range []string{j.Flag, j.With} {
				if flag != "" {
					args = append(args, flag)
				}
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := w.ralph(args...)
				require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				checkJSON(t, r.stdout, j.Form)
			})
			ran++
		}
	}
	assert.GreaterOrEqual(t, ran, 20, "the contract names the commands that print JSON")
}

// checkJSON checks out is what form says: one JSON value, or one per line.
func checkJSON(t *testing.T, out, form string) {
	t.Helper()
	require.NotEmpty(t, strings.TrimSpace(out))
	switch form {
	case "document":
		dec := json.NewDecoder(strings.NewReader(out))
		var v any
		require.NoError(t, dec.Decode(&v), out)
		assert.False(t, dec.More(), "one document, nothing after it: %s", out)
	case "lines":
		for line := range strings.Lines(out) {
			assert.True(t, json.Valid(bytes.TrimSpace([]byte(line))), "not a JSON line: %q", line)
		}
	default:
		t.Fatalf("unknown form %q", form)
	}
}

// With --json a command's error goes to stderr with its exit status, and
// stdout has nothing half-written on it.
func TestJSONErrorsLeaveStdoutEmpty(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iteratons: 3\n")
	for _, args := range [][]string{
		{"config", "show", "--json"},
		{"hats", "list", "--json"},
		{"hats", "graph", "--json"},
		{"status", "--json", "--last", "x"},
		{"init", "--json"},
	} {
		r := w.ralph(args...)
		assert.Equal(t, 3, r.code, "%v: %s", args, r.stderr)
		assert.Empty(t, r.stdout, "%v", args)
		assert.Contains(t, r.stderr, "ralph: error: ", "%v", args)
	}
	// validate's problems are its output: they are the JSON document.
	r := w.ralph("validate", "--json")
	assert.Equal(t, 3, r.code, r.stderr)
	var v validateJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), r.stdout)
	assert.False(t, v.OK)
	require.Len(t, v.Problems, 1)
	assert.Equal(t, 3, v.Problems[0].Line)
	assert.Contains(t, v.Problems[0].Message, `did you mean "max_iterations"`)
}
