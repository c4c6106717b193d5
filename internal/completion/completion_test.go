package completion

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A small command line: the scripts are tested end to end, in real shells,
// against ralph's own in cmd/ralph; here, that each shell gets its script
// and the options reach it.
type testCLI struct {
	Verbose bool `short:"v"`
	Run     struct {
		Backend string `placeholder:"NAME"`
		Hats    string `placeholder:"FILE|NAME"`
	} `cmd:"" aliases:"loop"`
}

func TestWrite(t *testing.T) {
	parser, err := kong.New(&testCLI{}, kong.Name("ralph"))
	require.NoError(t, err)
	opts := Options{FlagValues: map[string]func() []string{"backend": func() []string { return []string{"claude", "codex"} }},
		ValueOrFile: []string{"hats"}}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var b strings.Builder
		require.NoError(t, Write(&b, shell, parser.Model.Node, opts), shell)
		assert.Contains(t, b.String(), "loop", shell)
		assert.Contains(t, b.String(), "codex", "%s: the flag's values from Options", shell)
	}
	var b strings.Builder
	assert.ErrorContains(t, Write(&b, "tcsh", parser.Model.Node, opts), `no completion for shell "tcsh"`)
}
