package backends

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func TestDenyingCLIs(t *testing.T) {
	assert.Equal(t, []string{"claude", "copilot", "gemini", "opencode", "qwen"}, DenyingCLIs())
	assert.Equal(t, "--disallowedTools", DenyList("claude"))
	assert.Empty(t, DenyList("codex"))
	assert.Empty(t, DenyList("nosuch"))
}

func TestNewRefusesToolsACLICannotDeny(t *testing.T) {
	for _, name := range []string{"codex", "pi", "kiro", "amp", "cursor", "command"} {
		t.Run(name, func(t *testing.T) {
			_, err := New(Options{Name: name, Command: "x", DisallowedTools: []string{"Bash"}})
			var nd *NoDenyListError
			require.ErrorAs(t, err, &nd)
			assert.Equal(t, name, nd.Backend)
			assert.Contains(t, err.Error(), name+" cannot deny tools (disallowed_tools: Bash)")
			assert.Contains(t, err.Error(), "use claude, copilot, gemini, opencode, qwen, or remove disallowed_tools")

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

func TestGeminiPolicy(t *testing.T) {
	assert.Equal(t, "# ralph: cli.disallowed_tools and the hat's\n[[rule]]\ntoolName = [\"run_shell_command\",\"web_fetch\"]\n"+
		"decision = \"deny\"\npriority = 999\ndenyMessage = \"ralph's disallowed_tools denies this tool\"\n",
		string(geminiPolicy([]string{"run_shell_command", "web_fetch"})))
	assert.Contains(t, string(geminiPolicy([]string{`a"b\c`})), `toolName = ["a\"b\\c"]`, "quoted as a TOML basic string")
}

func TestNewDenyFile(t *testing.T) {
	spec := clis["gemini"].denyFile
	t.Run("written, and its flag added last", func(t *testing.T) {
		dir, args, err := newDenyFile(spec, []string{"run_shell_command"}, []string{"--yolo", "--sandbox"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		path := filepath.Join(dir, "ralph-disallowed-tools.toml")
		assert.Equal(t, []string{"--yolo", "--sandbox", "--policy", path}, args)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(geminiPolicy([]string{"run_shell_command"})), string(data))
	})
	t.Run("nothing to deny, nothing written", func(t *testing.T) {
		dir, args, err := newDenyFile(spec, nil, []string{"--yolo"})
		require.NoError(t, err)
		assert.Empty(t, dir)
		assert.Equal(t, []string{"--yolo"}, args)
	})
}

// TestGeminiRunPassesAndRemovesItsPolicy runs the gemini backend against
// the fake agent: the policy file is on its command line, and gone once
// the run is over.
func TestGeminiRunPassesAndRemovesItsPolicy(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.json")
	b, err := New(Options{Name: "gemini", Command: fakeAgentPath(t), KillGrace: fakeGrace, DisallowedTools: []string{"run_shell_command"}})
	require.NoError(t, err)
	_, err = b.Run(t.Context(), events.AgentRun{Prompt: "p", Dir: t.TempDir(), Env: fakeEnv("RECORD", record)}, nil)
	require.NoError(t, err)
	args := readFakeRecord(t, record).Args
	i := slices.Index(args, "--policy")
	require.GreaterOrEqual(t, i, 0, "args %q", args)
	require.Less(t, i+1, len(args))
	assert.Equal(t, "ralph-disallowed-tools.toml", filepath.Base(args[i+1]))
	assert.NoDirExists(t, filepath.Dir(args[i+1]), "the policy is removed after the run")
}
