package config_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

// The objective comes from the first of: -p, -P, event_loop.prompt,
// event_loop.prompt_file (next to the config, then in the workspace).
func TestObjectivePrecedence(t *testing.T) {
	tests := []struct {
		name       string
		config     string            // ralph.yml in <tmp>/conf
		files      map[string]string // paths under <tmp>
		prompt     string
		promptFile string // relative to the workspace, <tmp>/work
		wantText   string
		wantSource string // $DIR is <tmp>
	}{
		{
			name:   "-p beats everything",
			config: "event_loop:\n  prompt: from config\n",
			files:  map[string]string{"work/FLAG.md": "from -P", "conf/PROMPT.md": "from file"},
			prompt: "from -p", promptFile: "FLAG.md",
			wantText: "from -p", wantSource: "-p",
		},
		{
			name:       "-P beats the config",
			config:     "event_loop:\n  prompt: from config\n",
			files:      map[string]string{"work/FLAG.md": "from -P"},
			promptFile: "FLAG.md",
			wantText:   "from -P", wantSource: "$DIR/work/FLAG.md",
		},
		{
			name:     "event_loop.prompt beats PROMPT.md",
			config:   "hats: {}\nevent_loop:\n  prompt: from config\n",
			files:    map[string]string{"conf/PROMPT.md": "from file"},
			wantText: "from config", wantSource: "event_loop.prompt ($DIR/conf/ralph.yml:3)",
		},
		{
			name:     "PROMPT.md next to the config",
			config:   "cli:\n  backend: claude\n",
			files:    map[string]string{"conf/PROMPT.md": "next to config", "work/PROMPT.md": "in workspace"},
			wantText: "next to config", wantSource: "$DIR/conf/PROMPT.md",
		},
		{
			name:     "PROMPT.md in the workspace",
			config:   "cli:\n  backend: claude\n",
			files:    map[string]string{"work/PROMPT.md": "in workspace"},
			wantText: "in workspace", wantSource: "$DIR/work/PROMPT.md",
		},
		{
			name:     "a prompt_file of one's own",
			config:   "event_loop:\n  prompt_file: specs/TASK.md\n",
			files:    map[string]string{"conf/specs/TASK.md": "the spec"},
			wantText: "the spec", wantSource: "$DIR/conf/specs/TASK.md",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				writeFile(t, dir, name, data)
			}
			c, err := config.Load(writeFile(t, dir, "conf/ralph.yml", tt.config))
			require.NoError(t, err)
			work := filepath.Join(dir, "work")
			text, source, err := c.Objective(work, tt.prompt, tt.promptFile)
			require.NoError(t, err)
			assert.Equal(t, tt.wantText, text)
			assert.Equal(t, tt.wantSource, replaceDir(source, dir))
		})
	}
}

func TestObjectiveProblems(t *testing.T) {
	tests := []struct {
		name       string
		config     string
		files      map[string]string
		promptFile string
		want       string // the problem as one line, $DIR is <tmp>
		notExist   bool
	}{
		{
			name:     "no objective anywhere",
			config:   "cli:\n  backend: claude\n",
			want:     "no objective: no event_loop.prompt, and no file at $DIR/conf/PROMPT.md or $DIR/work/PROMPT.md (hint: add event_loop.prompt, create PROMPT.md, or pass -p)",
			notExist: true,
		},
		{
			name:     "a prompt_file that is not there",
			config:   "event_loop:\n  prompt_file: SPEC.md\n",
			want:     "$DIR/conf/ralph.yml:2: no objective: no event_loop.prompt, and no file at $DIR/conf/SPEC.md or $DIR/work/SPEC.md (hint: add event_loop.prompt, create PROMPT.md, or pass -p)",
			notExist: true,
		},
		{
			name:   "an empty PROMPT.md",
			config: "cli:\n  backend: claude\n",
			files:  map[string]string{"work/PROMPT.md": " \n\n"},
			want:   "no objective: $DIR/work/PROMPT.md is empty (hint: write the task into $DIR/work/PROMPT.md, or add event_loop.prompt, create PROMPT.md, or pass -p)",
		},
		{
			name:       "a -P file that is not there",
			config:     "event_loop:\n  prompt: unused\n",
			promptFile: "NOPE.md",
			want:       "read objective $DIR/work/NOPE.md: no such file or directory (hint: check -P NOPE.md, or add event_loop.prompt, create PROMPT.md, or pass -p)",
			notExist:   true,
		},
		{
			name:   "prompt and prompt_file both emptied",
			config: "event_loop:\n  prompt: \"\"\n  prompt_file: \"\"\n",
			want:   "$DIR/conf/ralph.yml:3: no objective: event_loop.prompt and event_loop.prompt_file are both empty (hint: add event_loop.prompt, create PROMPT.md, or pass -p)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				writeFile(t, dir, name, data)
			}
			c, err := config.Load(writeFile(t, dir, "conf/ralph.yml", tt.config))
			require.NoError(t, err)
			_, _, err = c.Objective(filepath.Join(dir, "work"), "", tt.promptFile)
			require.Error(t, err)
			var cerr *config.Error
			require.ErrorAs(t, err, &cerr)
			require.Len(t, cerr.Problems, 1)
			assert.Equal(t, tt.want, replaceDir(cerr.Problems[0].String(), dir))
			assert.Equal(t, tt.notExist, errors.Is(err, fs.ErrNotExist))
		})
	}
}

// Default() has no config file; PROMPT.md is looked for in dir alone.
func TestObjectiveWithoutConfigFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "PROMPT.md", "do the thing")
	text, source, err := config.Default().Objective(dir, "", "")
	require.NoError(t, err)
	assert.Equal(t, "do the thing", text)
	assert.Equal(t, filepath.Join(dir, "PROMPT.md"), source)
}
