package backends

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCLI writes an executable shell script and returns its path.
func fakeCLI(t *testing.T, name, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	return path
}

// noEnv is a Getenv that sees no variables, so a developer's own keys do
// not leak into the tests.
func noEnv(string) string { return "" }

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDiagnoseEveryCLIKnowsItsAuth(t *testing.T) {
	for _, name := range Names() {
		if name == nameCommand {
			continue
		}
		a, ok := authSpecs[name]
		if assert.True(t, ok, "%s has no authSpecs entry", name) {
			assert.NotEmpty(t, a.hint, "%s: how to log in", name)
			assert.NotEmpty(t, a.env, "%s: at least one variable", name)
		}
	}
}

func TestDiagnoseBinaryAndVersion(t *testing.T) {
	t.Run("found: path and the first line of --version", func(t *testing.T) {
		bin := fakeCLI(t, "claude", `[ "$1" = --version ] || exit 9; echo; echo "2.1.197 (Claude Code)"; echo second line`)
		d, err := Diagnose("claude", DiagnoseOptions{Command: bin, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.True(t, d.Found)
		assert.Equal(t, bin, d.Path)
		assert.Equal(t, "2.1.197 (Claude Code)", d.Version)
		assert.Empty(t, d.VersionError)
		assert.Empty(t, d.Problem)
	})
	t.Run("version on stderr only", func(t *testing.T) {
		bin := fakeCLI(t, "pi", `echo "0.73.1" >&2`)
		d, err := Diagnose("pi", DiagnoseOptions{Command: bin, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.Equal(t, "0.73.1", d.Version)
	})
	t.Run("the CLI's own variables reach the probe", func(t *testing.T) {
		bin := fakeCLI(t, "copilot", `echo "auto update: $COPILOT_AUTO_UPDATE, extra: $EXTRA"`)
		d, err := Diagnose("copilot", DiagnoseOptions{Command: bin, Env: map[string]string{"EXTRA": "yes"}, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.Equal(t, "auto update: false, extra: yes", d.Version)
	})
	t.Run("--version fails", func(t *testing.T) {
		bin := fakeCLI(t, "codex", `echo "error: unknown flag" >&2; exit 2`)
		d, err := Diagnose("codex", DiagnoseOptions{Command: bin, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.True(t, d.Found, "found, even if it cannot say its version")
		assert.Empty(t, d.Version)
		assert.Contains(t, d.VersionError, "exit status 2")
		assert.Contains(t, d.VersionError, "error: unknown flag")
	})
	t.Run("a hanging --version is cut off with its children", func(t *testing.T) {
		bin := fakeCLI(t, "gemini", `sleep 30 & sleep 30`)
		start := time.Now()
		d, err := Diagnose("gemini", DiagnoseOptions{Command: bin, VersionTimeout: 300 * time.Millisecond, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 20*time.Second, "the sleeps (30s) were cut short")
		assert.Contains(t, d.VersionError, "did not answer within 300ms")
	})
	t.Run("missing binary", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "claude")
		d, err := Diagnose("claude", DiagnoseOptions{Command: missing, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.False(t, d.Found)
		assert.Equal(t, missing, d.Binary)
		assert.Contains(t, d.Problem, "not found")
		assert.Contains(t, d.Problem, "npm install -g @anthropic-ai/claude-code")
	})
	t.Run("skip version", func(t *testing.T) {
		bin := fakeCLI(t, "qwen", `touch "$0.ran"; echo 1`)
		d, err := Diagnose("qwen", DiagnoseOptions{Command: bin, SkipVersion: true, Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.True(t, d.Found)
		assert.Empty(t, d.Version)
		assert.NoFileExists(t, bin+".ran")
	})
	t.Run("command without cli.command", func(t *testing.T) {
		d, err := Diagnose("command", DiagnoseOptions{Getenv: noEnv, Home: t.TempDir()})
		require.NoError(t, err)
		assert.False(t, d.Found)
		assert.Contains(t, d.Problem, "set cli.command")
	})
	t.Run("unknown name", func(t *testing.T) {
		_, err := Diagnose("clade", DiagnoseOptions{})
		var unknown *UnknownBackendError
		require.ErrorAs(t, err, &unknown)
		assert.Equal(t, "claude", unknown.Suggestion)
	})
}

func TestDiagnoseAuth(t *testing.T) {
	const secret = "sk-ant-this-must-never-be-printed"
	home := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		path := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	write(".claude/.credentials.json", `{"claudeAiOauth":{"accessToken":"`+secret+`"}}`)
	write(".gemini/settings.json", `{"security":{"auth":{"selectedType":"oauth-personal"}}}`)
	write(".gemini/oauth_creds.json", `{"access_token":"`+secret+`"}`)
	write(".local/share/opencode/auth.json", `{"openai":{"type":"api","key":"`+secret+`"},"anthropic":{"type":"oauth"}}`)
	write("custom-pi/auth.json", `{"anthropic":{"type":"api_key","key":"`+secret+`"}}`)
	env := envOf(map[string]string{"ANTHROPIC_API_KEY": secret, "PI_CODING_AGENT_DIR": filepath.Join(home, "custom-pi")})

	diagnose := func(name string, opts DiagnoseOptions) Diagnosis {
		t.Helper()
		opts.Getenv, opts.Home, opts.SkipVersion = env, home, true
		d, err := Diagnose(name, opts)
		require.NoError(t, err)
		out, err := json.Marshal(d)
		require.NoError(t, err)
		assert.NotContains(t, string(out), secret, "a secret in the diagnosis of %s", name)
		return d
	}

	assert.Equal(t, []AuthSetting{
		{Kind: "env", Name: "ANTHROPIC_API_KEY", Detail: "Anthropic API key"},
		{Kind: "file", Name: filepath.Join(home, ".claude", ".credentials.json"), Detail: "Claude Code login"},
	}, diagnose("claude", DiagnoseOptions{}).Auth)

	assert.Equal(t, []AuthSetting{
		{Kind: "file", Name: filepath.Join(home, ".gemini", "oauth_creds.json"), Detail: "Login with Google"},
		{Kind: "file", Name: filepath.Join(home, ".gemini", "settings.json"), Detail: "settings, auth type oauth-personal"},
	}, diagnose("gemini", DiagnoseOptions{}).Auth)

	oc := diagnose("opencode", DiagnoseOptions{}).Auth
	require.Len(t, oc, 2)
	assert.Equal(t, "ANTHROPIC_API_KEY", oc[0].Name)
	assert.Equal(t, "`opencode auth login`, providers: anthropic, openai", oc[1].Detail)

	pi := diagnose("pi", DiagnoseOptions{}).Auth
	require.Len(t, pi, 2)
	assert.Equal(t, filepath.Join(home, "custom-pi", "auth.json"), pi[1].Name, "PI_CODING_AGENT_DIR moves it")

	codex := diagnose("codex", DiagnoseOptions{Env: map[string]string{"OPENAI_API_KEY": secret}})
	assert.Equal(t, []AuthSetting{{Kind: "env", Name: "OPENAI_API_KEY", Detail: "OpenAI API key"}}, codex.Auth, "cli.env counts")
	assert.Contains(t, codex.AuthHint, "codex login")

	none := diagnose("copilot", DiagnoseOptions{})
	assert.Empty(t, none.Auth)
	assert.NotNil(t, none.Auth, "an empty list, not null, in JSON")
	assert.Contains(t, none.AuthHint, "COPILOT_GITHUB_TOKEN")
}

func TestCheckName(t *testing.T) {
	for _, name := range []string{"claude", "Codex", " gemini ", "auto", "command", "custom"} {
		assert.NoError(t, CheckName(name), name)
	}
	var unknown *UnknownBackendError
	assert.ErrorAs(t, CheckName("claud"), &unknown)
}
