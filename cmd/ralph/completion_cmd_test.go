package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandLines are, for every command and subcommand name and alias, the
// line that types it up to its last letter, and the word.
func commandLines(t *testing.T) [][2]string {
	t.Helper()
	parser, err := kong.New(&cli{}, kong.Name("ralph"))
	require.NoError(t, err)
	var lines [][2]string
	var walk func(n *kong.Node, path string)
	walk = func(n *kong.Node, path string) {
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			for _, word := range append([]string{c.Name}, c.Aliases...) {
				lines = append(lines, [2]string{path + " " + word[:len(word)-1], word})
			}
			walk(c, path+" "+c.Name)
		}
	}
	walk(parser.Model.Node, "ralph")
	return lines
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

// bashCompletes is what bash offers for line with the script at path
// loaded: the command `complete -p ralph` registered, run as bash runs it
// for a completion (the line and cursor in COMP_LINE and COMP_POINT, the
// command's name, the word and the word before as arguments), sorted.
func bashCompletes(t *testing.T, path, dir, line string) string {
	t.Helper()
	words := strings.Split(line, " ")
	probe := `source "$1"
spec=$(complete -p ralph) || exit 9
[[ $spec =~ ^complete\ .*-C\ (.+)\ ralph$ ]] || { echo "not a complete -C: $spec"; exit 9; }
export COMP_LINE=$2 COMP_POINT=${#2}
eval "${BASH_REMATCH[1]}" ralph '"$3"' '"$4"' | sort
`
	cmd := exec.Command("bash", "-c", probe, "probe", path, line, words[len(words)-1], words[len(words)-2])
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.Join(strings.Fields(string(out)), " ")
}

func TestCompletionBash(t *testing.T) {
	t.Parallel()
	script, path := completionScript(t, "bash")
	out, err := exec.Command("bash", "-n", path).CombinedOutput()
	require.NoError(t, err, "bash -n: %s", out)
	assert.Contains(t, script, "complete -o filenames -C '"+ralphBin+"' ralph", "the shell asks this ralph, by its path")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(twoHatConfig), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "team.yml"), nil, 0o644))
	tests := []struct {
		line string // the words typed, the last one being completed
		want string
	}{
		{"ralph lo", "loop"},
		{"ralph hats gr", "graph"},
		{"ralph hats graph --format ", "ascii dot json mermaid"},
		{"ralph hats graph -f m", "mermaid"},
		{"ralph init --preset td", "tdd"},
		{"ralph completion ", "bash fish zsh"},
		{"ralph -C . hats show ", "builder ralph reviewer"},
		{"ralph hats show ", "builder ralph reviewer"},
		{"ralph loop --hea", "--headless"},
		{"ralph run --hea", "--headless"},
		{"ralph config sh", "show"},
		{"ralph config show --exp", "--explain"},
		{"ralph capa", "capabilities"},
		{"ralph loop --se", "--set"},
		{"ralph validate -H code", "code-assist"},
		{"ralph validate -H tea", "team.yml"},
		{"ralph loop --backend a", "amp auto"},
		{"ralph init --backend co", "codex command copilot"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel() // a bash and a ralph each
			assert.Equal(t, tt.want, bashCompletes(t, path, dir, tt.line))
		})
	}
	elsewhere := t.TempDir()
	assert.Equal(t, "builder ralph reviewer", bashCompletes(t, path, elsewhere, "ralph -C "+dir+" hats show "), "the hats of -C's workspace")
	assert.Empty(t, bashCompletes(t, path, elsewhere, "ralph hats show "), "no config, no hats")
	for _, l := range commandLines(t) {
		assert.Contains(t, strings.Fields(bashCompletes(t, path, dir, l[0])), l[1], "%q", l[0])
	}
}

func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed: its completion script is not syntax-checked")
	}
	script, path := completionScript(t, "zsh")
	out, err := exec.Command("zsh", "-n", path).CombinedOutput()
	require.NoError(t, err, "zsh -n: %s", out)
	assert.Contains(t, script, "bashcompinit")
	assert.Contains(t, script, "complete -C '"+ralphBin+"' ralph")
}

func TestCompletionFish(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed: its completion script is not checked")
	}
	_, path := completionScript(t, "fish")
	out, err := exec.Command("fish", "-n", path).CombinedOutput()
	require.NoError(t, err, "fish -n: %s", out)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(twoHatConfig), 0o644))
	tests := []struct{ line, want string }{
		{"ralph hats gr", "graph"},
		{"ralph hats graph --format ", "ascii dot json mermaid"},
		{"ralph init --preset td", "tdd"},
		{"ralph hats show ", "builder ralph reviewer"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd := exec.Command("fish", "-c", "source "+path+"; complete -C "+strconv.Quote(tt.line))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				word, _, _ := strings.Cut(l, "\t")
				got = append(got, word)
			}
			sort.Strings(got)
			assert.Equal(t, tt.want, strings.Join(got, " "))
		})
	}
}
