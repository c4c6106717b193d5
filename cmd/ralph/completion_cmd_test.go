package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandWords are every command's and subcommand's names and aliases, from
// the same kong model the completions are built from.
func commandWords(t *testing.T) []string {
	t.Helper()
	parser, err := kong.New(&cli{}, kong.Name("ralph"))
	require.NoError(t, err)
	var words []string
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, c := range n.Children {
			words = append(words, c.Name)
			words = append(words, c.Aliases...)
			walk(c)
		}
	}
	walk(parser.Model.Node)
	return words
}

func completionScript(t *testing.T, shell string) (string, string) {
	t.Helper()
	w := newWorkspace(t)
	r := w.ralph("completion", shell)
	require.Equal(t, 0, r.code, r.stderr)
	path := filepath.Join(t.TempDir(), "ralph."+shell)
	require.NoError(t, os.WriteFile(path, []byte(r.stdout), 0o644))
	return r.stdout, path
}

// shellEnv puts the ralph under test first on PATH, since the scripts call
// `ralph hats list` for hat ids.
func shellEnv() []string {
	return append(os.Environ(), "PATH="+filepath.Dir(ralphBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestCompletionBash(t *testing.T) {
	script, path := completionScript(t, "bash")
	out, err := exec.Command("bash", "-n", path).CombinedOutput()
	require.NoError(t, err, "bash -n: %s", out)
	for _, word := range commandWords(t) {
		assert.Contains(t, script, "/"+word+"'", "command %s", word)
	}

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(twoHatConfig), 0o644))
	tests := []struct {
		line string // the words typed, the last one being completed
		want string
	}{
		{"ralph lo", "loop"},
		{"ralph hats gr", "graph"},
		{"ralph hats graph --format ", "ascii mermaid dot"},
		{"ralph hats graph -f m", "mermaid"},
		{"ralph init --preset t", "tdd"},
		{"ralph completion ", "bash zsh fish"},
		{"ralph -C . hats show ", "builder reviewer ralph"},
		{"ralph loop --hea", "--headless"},
		{"ralph validate -H code", "code-assist"},
		{"ralph loop --backend a", "amp auto"},
		{"ralph init --backend co", "codex command copilot"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			words := strings.Split(tt.line, " ")
			probe := "source " + path + "\nCOMP_WORDS=(" + bashWords(words) + ")\nCOMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "\n_ralph\necho \"${COMPREPLY[*]}\"\n"
			cmd := exec.Command("bash", "-c", probe)
			cmd.Dir, cmd.Env = dir, shellEnv()
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, tt.want, strings.TrimSpace(string(out)))
		})
	}
}

func bashWords(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

func TestCompletionZsh(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed: its completion script is not syntax-checked")
	}
	script, path := completionScript(t, "zsh")
	out, err := exec.Command("zsh", "-n", path).CombinedOutput()
	require.NoError(t, err, "zsh -n: %s", out)
	assert.True(t, strings.HasPrefix(script, "#compdef ralph\n"))
	for _, word := range commandWords(t) {
		assert.Contains(t, script, "'"+word+":", "command %s", word)
	}
}

func TestCompletionFish(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed: its completion script is not checked")
	}
	script, path := completionScript(t, "fish")
	out, err := exec.Command("fish", "-n", path).CombinedOutput()
	require.NoError(t, err, "fish -n: %s", out)
	for _, word := range commandWords(t) {
		assert.Contains(t, script, " -a '"+word+"'", "command %s", word)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(twoHatConfig), 0o644))
	tests := []struct{ line, want string }{
		{"ralph hats gr", "graph"},
		{"ralph hats graph --format ", "ascii dot mermaid"},
		{"ralph init --preset t", "tdd"},
		{"ralph hats show ", "builder ralph reviewer"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd := exec.Command("fish", "-c", "source "+path+"; complete -C "+strconv.Quote(tt.line))
			cmd.Dir, cmd.Env = dir, shellEnv()
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				word, _, _ := strings.Cut(l, "\t")
				got = append(got, word)
			}
			assert.Equal(t, tt.want, strings.Join(got, " "))
		})
	}
}

func TestHelpOfPresetAndTopologyCommands(t *testing.T) {
	for _, args := range [][]string{{"init"}, {"hats"}, {"hats", "list"}, {"hats", "show"}, {"hats", "graph"}, {"schema"}, {"completion"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := newWorkspace(t).ralph(append(args, "--help")...)
			assert.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, "Examples:")
			assert.Contains(t, r.stdout, "ralph "+strings.Join(args, " "))
		})
	}
}
