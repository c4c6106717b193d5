package completion

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/posener/complete"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A small command line: ralph's own is completed end to end, in real
// shells, in cmd/ralph; here, what this package adds to kongplete's.
type testCLI struct {
	Verbose bool   `short:"v"`
	Dir     string `short:"C" placeholder:"DIR"`
	Run     struct {
		Backend string   `placeholder:"NAME"`
		Hats    string   `short:"H" placeholder:"FILE|NAME"`
		Config  []string `short:"c" placeholder:"FILE"`
		Format  string   `enum:"text,json" default:"text"`
		Hat     string   `arg:"" optional:"" predictor:"hat"`
	} `cmd:"" aliases:"loop"`
	Hidden struct{} `cmd:"" hidden:""`
}

var testOptions = Options{
	FlagValues:  map[string]func() []string{"backend": func() []string { return []string{"claude", "codex"} }, "hats": func() []string { return []string{"tdd"} }},
	ValueOrFile: []string{"hats"},
	Predictors:  map[string]complete.Predictor{"hat": complete.PredictSet("builder", "reviewer")},
}

// completions are what Complete prints for line, sorted.
func completions(t *testing.T, line string) []string {
	t.Helper()
	parser, err := kong.New(&testCLI{}, kong.Name("ralph"))
	require.NoError(t, err)
	t.Setenv("COMP_LINE", line)
	t.Setenv("COMP_POINT", strconv.Itoa(len(line)))
	require.True(t, Requested())
	var b strings.Builder
	require.NoError(t, Complete(&b, parser, testOptions))
	words := strings.Fields(b.String())
	slices.Sort(words)
	return words
}

func TestComplete(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "team.yml"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	t.Chdir(dir)
	tests := []struct {
		line string
		want []string
	}{
		{"ralph ", []string{"loop", "run"}},
		{"ralph lo", []string{"loop"}},
		{"ralph loop --backend c", []string{"claude", "codex"}},
		{"ralph loop -H ", []string{"./", "sub/", "tdd", "team.yml"}},
		{"ralph loop --format ", []string{"json", "text"}},
		{"ralph loop -c t", []string{"team.yml"}},
		{"ralph -C ", []string{"./", "sub/"}},
		{"ralph -v loop --verb", []string{"--verbose"}},
		{"ralph loop --backend codex ", []string{"builder", "reviewer"}},
		{"ralph hid", []string{}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, completions(t, tt.line), "%q", tt.line)
	}
}

func TestLineFlag(t *testing.T) {
	for line, want := range map[string]string{
		"ralph -C /w hats show ":    "/w",
		"ralph --dir=/w hats show ": "/w",
		"ralph hats show -C":        "",
		"ralph hats show ":          "",
	} {
		t.Setenv("COMP_LINE", line)
		assert.Equal(t, want, LineFlag("-C", "--dir"), line)
	}
}

func TestScript(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var b strings.Builder
		require.NoError(t, Script(&b, shell, "ralph", "/opt/it's/ralph"), shell)
		assert.Contains(t, b.String(), `'/opt/it'\''s/ralph'`, "%s: the path, quoted", shell)
		assert.Contains(t, b.String(), "complete ", shell)
	}
	var b strings.Builder
	assert.ErrorContains(t, Script(&b, "tcsh", "ralph", "/bin/ralph"), `no completion for shell "tcsh"`)
}
