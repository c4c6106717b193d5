package tasks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/forgetest"
)

func TestValidModel(t *testing.T) {
	for _, good := range []string{"opus", "claude-opus-4-1", "gpt-5-codex", "gemini-2.5-pro",
		"anthropic/claude-sonnet-4", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "sonnet[1m]", "o3", "4o", "a@b_c"} {
		assert.NoError(t, ValidModel(good), good)
	}
	for bad, says := range map[string]string{
		"":                               "empty",
		"--dangerously-skip-permissions": `starts with "-"`,
		"-m":                             `starts with "-"`,
		"a b":                            `contains ' '`,
		"opus;rm -rf ~":                  `contains ';'`,
		"$(id)":                          `starts with "$"`,
		"opus\n--yolo":                   `contains '\n'`,
		`"opus"`:                         `starts with "\""`,
		"ópus":                           `starts with`,
		"x" + string(make([]byte, 100)):  "bytes long",
	} {
		err := ValidModel(bad)
		if assert.Error(t, err, "%q", bad) {
			assert.Contains(t, err.Error(), says, "%q", bad)
		}
	}
}

func TestCheckAgent(t *testing.T) {
	ok := []Task{
		{ID: "a"},
		{ID: "a", Backend: "codex", Model: "gpt-5", Tags: []string{"backend:codex", "model:gpt-5"}},
		{ID: "a", Model: "opus", Tags: []string{"model: opus", "model::opus"}},
		{ID: "a", Tags: []string{"model:", "backend: "}}, // a label with no value names nothing
	}
	for _, task := range ok {
		assert.NoError(t, task.CheckAgent(), "%+v", task)
	}
	for says, task := range map[string]Task{
		`names 2 models, "opus" and "haiku": keep one`: {ID: "a", Model: "opus", Tags: []string{"model:haiku"}},
		`names 2 backends, "claude" and "codex"`:       {ID: "a", Tags: []string{"backend:claude", "backend:codex"}},
		`task a: model "--foo" starts with "-"`:        {ID: "a", Model: "--foo"},
		`task a: model "a b" contains ' '`:             {ID: "a", Model: "a b"},
		`task a: backend "claude --yolo" contains ' '`: {ID: "a", Backend: "claude --yolo"},
		`task a: backend "./agent" is not a backend's`: {ID: "a", Backend: "./agent"},
		`task a: model "{\"x\":1}" starts with "{"`:    {ID: "a", Model: agentField([]byte(`{"x":1}`))},
		`task a: model "[\"opus\"]" starts with "["`:   {ID: "a", Model: agentField([]byte(`["opus"]`))},
	} {
		task = withAgent(task)
		err := task.CheckAgent()
		if assert.Error(t, err, "%+v", task) {
			assert.Contains(t, err.Error(), says)
		}
	}
}

// Every source reads the agent a task names: tags and labels, and the
// fields of prd.json and a command tracker's JSON.
func TestSourcesReadTheAgent(t *testing.T) {
	t.Run("tk", func(t *testing.T) {
		got, err := parseTkShow([]byte("---\nid: a-1\nstatus: open\ntags: [component:api, model:opus, backend:claude]\n---\n# Title\n"))
		require.NoError(t, err)
		assert.Equal(t, "claude", got.Backend)
		assert.Equal(t, "opus", got.Model)
	})
	t.Run("beads", func(t *testing.T) {
		got, err := parseBeadsList([]byte(`[{"id":"b-1","title":"T","labels":["model:gpt-5","backend:codex"]}]`))
		require.NoError(t, err)
		assert.Equal(t, "codex", got[0].task().Backend)
		assert.Equal(t, "gpt-5", got[0].task().Model)
	})
	t.Run("prd", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "prd.json", `{"userStories":[
  {"id":"US-1","title":"One","model":"opus","backend":"claude"},
  {"id":"US-2","title":"Two","tags":["model:haiku"]},
  {"id":"US-3","title":"Three","model":"--foo"},
  {"id":"US-4","title":"Four","model":7},
  {"id":"US-5","title":"Five","model":null}]}`)
		src, err := Open(Spec{Type: "prd"}, dir)
		require.NoError(t, err)
		ready, err := src.Ready(context.Background())
		require.NoError(t, err, "a bad model fails its story, not the read")
		require.Len(t, ready, 5)
		assert.Equal(t, [][2]string{{"claude", "opus"}, {"", "haiku"}, {"", "--foo"}, {"", "7"}, {"", ""}}, agents(ready))
		assert.Error(t, ready[2].CheckAgent())
	})
	t.Run("command", func(t *testing.T) {
		got, err := parseCommandList([]byte(`[{"id":"c-1","title":"T","model":"gemini-2.5-pro","backend":"gemini"},{"id":"c-2","title":"U","labels":["model:o3"]}]`))
		require.NoError(t, err)
		assert.Equal(t, [][2]string{{"gemini", "gemini-2.5-pro"}, {"", "o3"}}, agents(got))
	})
	t.Run("forge", func(t *testing.T) {
		f := forgetest.New("ralph-bot")
		f.Add(forge.Issue{ID: "1", Title: "Labelled", Labels: []string{"ralph", "model:opus", "backend:claude"}, Priority: -1})
		f.Add(forge.Issue{ID: "2", Title: "Scoped", Labels: []string{"ralph", "model::gpt-5"}, Priority: -1})
		ready, err := NewForgeSource("gitlab", f, "").Ready(context.Background())
		require.NoError(t, err)
		assert.Equal(t, [][2]string{{"claude", "opus"}, {"", "gpt-5"}}, agents(ready))
	})
	t.Run("checklist", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"),
			[]byte("- [ ] Write the parser model:opus\n- [ ] backend:codex Add the flag model:gpt-5\n- [ ] Plain\n"), 0o644))
		src, err := Open(Spec{Type: "checklist"}, dir)
		require.NoError(t, err)
		ready, err := src.Ready(context.Background())
		require.NoError(t, err)
		require.Len(t, ready, 3)
		assert.Equal(t, [][2]string{{"", "opus"}, {"codex", "gpt-5"}, {"", ""}}, agents(ready))
		assert.Equal(t, "Write the parser", ready[0].Title, "the agent's words are not the title")
		assert.Equal(t, "write-the-parser", ready[0].ID, "nor the id: naming a model keeps the task")
		assert.Equal(t, "Add the flag", ready[1].Title)
	})
}

func agents(ts []Task) [][2]string {
	out := make([][2]string, len(ts))
	for i, t := range ts {
		out[i] = [2]string{t.Backend, t.Model}
	}
	return out
}
