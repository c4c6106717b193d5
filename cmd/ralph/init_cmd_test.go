package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/examples"
)

func TestInitWritesThePresetAndAPrompt(t *testing.T) {
	w := newWorkspace(t)
	r := w.ralph("init")
	require.Equal(t, 0, r.code, r.stderr)
	def, _ := examples.Lookup(examples.DefaultPreset)
	assert.Equal(t, string(def.Data), w.read("ralph.yml"), "the default preset, byte for byte")
	assert.Equal(t, examples.PromptTemplate, w.read("PROMPT.md"))
	assert.Equal(t, "wrote "+w.dir+"/ralph.yml (preset code-assist, backend claude)\n"+
		"wrote "+w.dir+"/PROMPT.md: replace its text with the task\n"+
		"next: ralph validate, ralph hats graph, then ralph loop\n", r.stdout)
}

func TestInitRefusesToOverwrite(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.json", `{"task": "x"}`)
	w.write("PROMPT.md", "My task.\n")

	r := w.ralph("init", "--preset", "tdd")
	assert.Equal(t, 3, r.code)
	assert.Equal(t, "ralph: error: "+w.dir+"/ralph.json already exists\n"+
		"ralph: hint: pass --force to replace it, or use the preset without writing it: ralph loop -H tdd\n", r.stderr)

	r = w.ralph("init", "--preset", "tdd", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	tdd, _ := examples.Lookup("tdd")
	assert.Equal(t, string(tdd.Data), w.read("ralph.yml"))
	assert.Equal(t, "My task.\n", w.read("PROMPT.md"), "an existing PROMPT.md is kept")
	assert.Contains(t, r.stdout, "kept "+w.dir+"/PROMPT.md")
}

// --backend changes the one value and nothing else: comments, blank lines
// and layout stay as the preset has them.
func TestInitBackend(t *testing.T) {
	w := newWorkspace(t)
	r := w.ralph("init", "--preset", "review", "--backend", "codex")
	require.Equal(t, 0, r.code, r.stderr)
	review, _ := examples.Lookup("review")
	want := strings.Replace(string(review.Data), "cli:\n  backend: claude\n", "cli:\n  backend: codex\n", 1)
	assert.Equal(t, want, w.read("ralph.yml"))
	v := w.ralph("validate")
	require.Equal(t, 0, v.code, v.stderr)
	assert.Contains(t, v.stdout, "backend codex")
}

func TestInitErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a name", []string{"--backend", "claude\n  model: x"},
			"ralph: error: --backend \"claude\\n  model: x\": not a backend name\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			r := w.ralph(append([]string{"init"}, tt.args...)...)
			assert.Equal(t, 3, r.code)
			assert.True(t, strings.HasPrefix(r.stderr, tt.want), r.stderr)
			r = w.ralph("validate")
			assert.Equal(t, 3, r.code, "nothing was written")
		})
	}
}

// ralph init --backend command --command PATH writes a config that runs
// PATH as the agent: validate accepts it and a loop runs it.
func TestInitCommandBackend(t *testing.T) {
	w := newWorkspace(t)
	r := w.ralph("init", "--preset", "solo", "--backend", "command", "--command", agentBin, "--arg=--quiet mode", "--arg", "true")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr, "the program is there: no warning")
	solo, _ := examples.Lookup("solo")
	want := strings.Replace(string(solo.Data), "cli:\n  backend: claude\n",
		"cli:\n  backend: command\n  command: "+agentBin+"\n  args: [\"--quiet mode\", \"true\"]\n", 1)
	assert.Equal(t, want, w.read("ralph.yml"), "only the cli: section changes; args that YAML would not read as strings are quoted")
	assert.Contains(t, r.stdout, "(preset solo, backend command)")
	v := w.ralph("validate")
	require.Equal(t, 0, v.code, v.stderr)

	// Run it: ralph starts the program, which gets the prompt after its
	// arguments.
	w.write("PROMPT.md", "Say done.\n")
	w.script(agentScript{Steps: []step{say("working")}})
	r = w.ralph("loop", "--max-iterations", "1")
	assert.Equal(t, 2, r.code, "the one iteration ran, and the limit ended the run: %s", r.stderr)
	assert.Contains(t, w.prompt(1), "Say done.")
}

func TestInitList(t *testing.T) {
	r := newWorkspace(t).ralph("init", "--list")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, len(examples.Names()))
	for i, p := range examples.Presets() {
		assert.True(t, strings.HasPrefix(lines[i], p.Name+" "), lines[i])
		assert.Contains(t, lines[i], p.Description)
	}
	assert.Contains(t, r.stdout, "code-assist  Change an existing codebase step by step: planner -> builder -> reviewer -> finalizer. [default]\n")
}
