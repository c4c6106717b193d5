package backends

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDenyingCLIs(t *testing.T) {
	assert.Equal(t, []string{"claude", "copilot", "opencode", "qwen"}, DenyingCLIs())
	assert.Equal(t, "--disallowedTools", DenyList("claude"))
	assert.Empty(t, DenyList("codex"))
	assert.Empty(t, DenyList("nosuch"))
}

func TestNewRefusesToolsACLICannotDeny(t *testing.T) {
	for _, name := range []string{"codex", "gemini", "pi", "kiro", "amp", "cursor", "command"} {
		t.Run(name, func(t *testing.T) {
			_, err := New(Options{Name: name, Command: "x", DisallowedTools: []string{"Bash"}})
			var nd *NoDenyListError
			require.ErrorAs(t, err, &nd)
			assert.Equal(t, name, nd.Backend)
			assert.Contains(t, err.Error(), name+" cannot deny tools (disallowed_tools: Bash)")
			assert.Contains(t, err.Error(), "use claude, copilot, opencode, qwen, or remove disallowed_tools")

			se := NewSetupError(err, "unrelated fix")
			assert.Contains(t, se.Problem, name+" cannot deny tools")
			assert.Contains(t, se.Fix, "remove disallowed_tools (Bash)")
		})
	}
	t.Run("custom is command", func(t *testing.T) {
		_, err := New(Options{Name: "custom", Command: "x", DisallowedTools: []string{"Bash"}})
		assert.ErrorContains(t, err, "command cannot deny tools")
	})
	t.Run("an empty list asks nothing of the CLI", func(t *testing.T) {
		_, err := New(Options{Name: "codex", DisallowedTools: []string{}})
		assert.NoError(t, err)
	})
}

func TestNewSetupErrorKeepsOtherFixes(t *testing.T) {
	_, err := New(Options{Name: "nosuch"})
	se := NewSetupError(err, "set cli.backend")
	assert.Equal(t, "set cli.backend", se.Fix)
	assert.Empty(t, se.Problem)
}

func TestOpenCodeDenyEnv(t *testing.T) {
	t.Run("each tool denied", func(t *testing.T) {
		b, err := New(Options{Name: "opencode", DisallowedTools: []string{"bash", "webfetch"}})
		require.NoError(t, err)
		inv, _ := b.invocation("/bin/opencode", "p")
		assert.Equal(t, []string{"OPENCODE_DISABLE_AUTOUPDATE=1", `OPENCODE_PERMISSION={"bash":"deny","webfetch":"deny"}`}, inv.env)
		assert.Equal(t, []string{"run", "--format", "json", "--auto"}, inv.args, "the deny list is not on the command line")
	})
	t.Run("cli.env's permissions kept, its allow of a denied tool overruled", func(t *testing.T) {
		b, err := New(Options{Name: "opencode", DisallowedTools: []string{"bash"},
			Env: map[string]string{"OPENCODE_PERMISSION": `{"bash":"allow","edit":"ask"}`}})
		require.NoError(t, err)
		inv, _ := b.invocation("/bin/opencode", "p")
		require.NotEmpty(t, inv.env)
		assert.Equal(t, `OPENCODE_PERMISSION={"bash":"deny","edit":"ask"}`, inv.env[len(inv.env)-1], "last, so it wins over cli.env's")
	})
	t.Run("cli.env's value that is no object is replaced", func(t *testing.T) {
		assert.Equal(t, []string{`OPENCODE_PERMISSION={"bash":"deny"}`},
			opencodeDenyEnv(Options{DisallowedTools: []string{"bash"}, Env: map[string]string{"OPENCODE_PERMISSION": "null"}}))
	})
	t.Run("nothing denied, nothing set", func(t *testing.T) {
		b, err := New(Options{Name: "opencode"})
		require.NoError(t, err)
		inv, _ := b.invocation("/bin/opencode", "p")
		assert.Equal(t, []string{"OPENCODE_DISABLE_AUTOUPDATE=1"}, inv.env)
	})
}
