package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

// layersDir is a workspace with a ralph.yml and a user config beside it.
func layersDir(t *testing.T, project, user string) (dir, userFile string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(project), 0o644))
	userFile = filepath.Join(t.TempDir(), "ralph", config.UserFileName)
	if user != "" {
		require.NoError(t, os.MkdirAll(filepath.Dir(userFile), 0o755))
		require.NoError(t, os.WriteFile(userFile, []byte(user), 0o644))
	}
	return dir, userFile
}

const layersProject = `event_loop:
  prompt: ship it
  max_iterations: 3
cli:
  backend: claude
`

// The user's config lies under the project's files: what the project sets
// wins, and the user's fills in the rest.
func TestUserConfigLiesUnderTheProject(t *testing.T) {
	dir, user := layersDir(t, layersProject, "cli:\n  backend: codex\n  model: o3\nevent_loop:\n  max_iterations: 9\n  max_cost_usd: 5\n")
	cfg, _, err := config.LoadIn(dir, nil, nil, config.Options{User: user})
	require.NoError(t, err)
	assert.Equal(t, "claude", cfg.CLI.Backend, "the project's backend wins")
	assert.Equal(t, "o3", cfg.CLI.Model, "the user's model fills in")
	assert.Equal(t, 3, cfg.EventLoop.MaxIterations)
	assert.InDelta(t, 5.0, cfg.EventLoop.MaxCostUSD, 0)
	assert.Equal(t, filepath.Join(dir, "ralph.yml"), cfg.Path, "the config is still the project's")
}

func TestMissingUserConfigAddsNothing(t *testing.T) {
	dir, user := layersDir(t, layersProject, "")
	cfg, _, err := config.LoadIn(dir, nil, nil, config.Options{User: user})
	require.NoError(t, err)
	assert.Equal(t, "claude", cfg.CLI.Backend)
}

// The user's own file is checked like the project's, and its problems
// name it with the line.
func TestUserConfigProblemsNameItsFileAndLine(t *testing.T) {
	dir, user := layersDir(t, layersProject, "cli:\n  backend: codex\n  modle: o3\n")
	_, _, err := config.LoadIn(dir, nil, nil, config.Options{User: user})
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	require.Len(t, cerr.Problems, 1)
	assert.Equal(t, user+":3", cerr.Problems[0].Where())
	assert.Contains(t, cerr.Problems[0].Msg, `did you mean "model"`)
}

func TestSetAssignsKeysOverEverything(t *testing.T) {
	dir, user := layersDir(t, layersProject, "cli:\n  model: o3\n")
	tests := []struct {
		name string
		sets []string
		want func(t *testing.T, c *config.Config)
	}{
		{"a number", []string{"event_loop.max_iterations=1"}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, 1, c.EventLoop.MaxIterations)
			assert.Equal(t, "ship it", c.EventLoop.Prompt, "its siblings stay")
		}},
		{"a flow list", []string{"cli.args=[--foo, --bar]"}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, []string{"--foo", "--bar"}, c.CLI.Args)
		}},
		{"over the user's config", []string{"cli.model=opus"}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, "opus", c.CLI.Model)
		}},
		{"later over earlier", []string{"cli.backend=codex", "cli.backend=gemini"}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, "gemini", c.CLI.Backend)
		}},
		{"a flow mapping merges", []string{"cli={model: haiku}"}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, "haiku", c.CLI.Model)
			assert.Equal(t, "claude", c.CLI.Backend)
		}},
		{"a v1 flat key lands in its section", []string{"max_iterations=7"}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, 7, c.EventLoop.MaxIterations)
		}},
		{"an empty value is the empty string", []string{"event_loop.prompt="}, func(t *testing.T, c *config.Config) {
			assert.Empty(t, c.EventLoop.Prompt)
		}},
		{"a string that looks like a number when quoted", []string{`cli.model="4"`}, func(t *testing.T, c *config.Config) {
			assert.Equal(t, "4", c.CLI.Model)
		}},
		{"a new hat", []string{"hats.reviewer={triggers: [review.start], publishes: [review.done]}"}, func(t *testing.T, c *config.Config) {
			h, ok := c.FindHat("reviewer")
			require.True(t, ok)
			assert.Equal(t, []string{"review.start"}, h.Triggers)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := config.LoadIn(dir, nil, nil, config.Options{User: user, Sets: tt.sets})
			require.NoError(t, err)
			tt.want(t, cfg)
		})
	}
}

// A --set is checked like the file, and its problem names the flag and
// the key instead of a file:line.
func TestSetProblemsNameTheFlag(t *testing.T) {
	dir, _ := layersDir(t, layersProject, "")
	tests := []struct {
		set, where, msg string
	}{
		{"event_loop.max_iteratons=1", "--set event_loop.max_iteratons", `unknown key "max_iteratons" in event_loop; did you mean "max_iterations"?`},
		{"event_loop.max_iterations=many", "--set event_loop.max_iterations", `event_loop.max_iterations: expected an integer, got "many"`},
		{"event_loop.max_iterations=0", "--set event_loop.max_iterations", "event_loop.max_iterations"},
		{"cli.backend=claud", "--set cli.backend", "claud"},
		{"event_loop", "--set event_loop", "expected key.path=value"},
		{"=3", "--set =3", "expected key.path=value"},
		{"event_loop..max_iterations=1", "--set event_loop..max_iterations", "empty part"},
		{"cli.args=[a", "--set cli.args", "the value is not YAML: did not find expected ',' or ']'"},
		{"evnt_loop.max_iterations=1", "--set evnt_loop.max_iterations", `did you mean "event_loop"?`},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			_, _, err := config.LoadIn(dir, nil, nil, config.Options{Sets: []string{tt.set}})
			var cerr *config.Error
			require.ErrorAs(t, err, &cerr)
			require.Len(t, cerr.Problems, 1, "%v", err)
			p := cerr.Problems[0]
			assert.Equal(t, tt.where, p.Where())
			assert.Contains(t, p.Msg, tt.msg)
			assert.NotEmpty(t, p.Hint)
		})
	}
}

// --set lies over a hat collection too: it is the last word.
func TestSetLiesOverACollection(t *testing.T) {
	dir, _ := layersDir(t, layersProject, "")
	col := config.Collection{Name: "col.yml", Data: []byte("event_loop:\n  max_iterations: 40\nhats:\n  a:\n    triggers: [task.start]\n")}
	cfg, _, err := config.LoadIn(dir, nil, &col, config.Options{Sets: []string{"event_loop.max_iterations=2"}})
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.EventLoop.MaxIterations)
}

// Without a project file the user's config and --set still lie over the
// defaults.
func TestLoadOver(t *testing.T) {
	_, user := layersDir(t, layersProject, "cli:\n  backend: codex\n")
	cfg, err := config.LoadOver(config.Options{User: user, Sets: []string{"event_loop.max_iterations=4"}})
	require.NoError(t, err)
	assert.Equal(t, "codex", cfg.CLI.Backend)
	assert.Equal(t, 4, cfg.EventLoop.MaxIterations)
	assert.Equal(t, "PROMPT.md", cfg.EventLoop.PromptFile)
}

func TestUserFile(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/x/conf"}
	assert.Equal(t, filepath.Join("/x/conf", "ralph", "config.yml"), config.UserFile(func(k string) string { return env[k] }))
	env["XDG_CONFIG_HOME"] = "relative/conf"
	dir, err := os.UserConfigDir()
	if err == nil {
		assert.Equal(t, filepath.Join(dir, "ralph", "config.yml"), config.UserFile(func(k string) string { return env[k] }),
			"a relative XDG_CONFIG_HOME is ignored, as the spec says")
	}
}

// Explain says where every value came from: a project file and its line,
// the user's file and its line, a --set, or the default.
func TestExplainSaysWhereEachValueCameFrom(t *testing.T) {
	dir, user := layersDir(t, layersProject, "cli:\n  model: o3\n  env:\n    GITHUB_TOKEN: ghp_0123456789abcdef\n    REGION: eu\n")
	cfg, _, err := config.LoadIn(dir, nil, nil, config.Options{User: user, Sets: []string{"cli.args=[--foo]"}})
	require.NoError(t, err)
	byPath := map[string]config.Value{}
	for _, v := range cfg.Explain() {
		byPath[v.Path] = v
	}
	project := filepath.Join(dir, "ralph.yml")
	assert.Equal(t, config.Value{Path: "event_loop.max_iterations", Value: 3, Kind: config.FromFile, File: project, Line: 3},
		byPath["event_loop.max_iterations"])
	assert.Equal(t, config.Value{Path: "cli.model", Value: "o3", Kind: config.FromUser, File: user, Line: 2}, byPath["cli.model"])
	assert.Equal(t, config.Value{Path: "cli.args", Value: []any{"--foo"}, Kind: config.FromSet, File: "--set cli.args"}, byPath["cli.args"])
	assert.Equal(t, config.Value{Path: "event_loop.prompt_file", Value: "PROMPT.md", Kind: config.FromDefault}, byPath["event_loop.prompt_file"])
	assert.Equal(t, "[redacted:GITHUB_TOKEN]", byPath["cli.env.GITHUB_TOKEN"].Value, "a secret is never shown")
	assert.Equal(t, "eu", byPath["cli.env.REGION"].Value)

	text := string(cfg.ExplainedYAML(true, filepath.Base))
	assert.Contains(t, text, "max_iterations: 3 # ralph.yml:3\n")
	assert.Contains(t, text, "model: o3 # config.yml:2\n")
	assert.Contains(t, text, "args: [--foo] # --set cli.args\n")
	assert.Contains(t, text, "prompt_file: PROMPT.md # default\n")
	assert.NotContains(t, text, "ghp_0123456789abcdef")
	plain := string(cfg.ExplainedYAML(false, nil))
	assert.NotContains(t, plain, "#")
	assert.Contains(t, plain, "max_iterations: 3\n")
}
