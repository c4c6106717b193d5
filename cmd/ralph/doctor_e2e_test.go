package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/backends"
)

// doctorEnv is a machine with only the given fake CLIs on PATH and an empty
// home, so neither the developer's own agents nor their keys show up.
type doctorEnv struct {
	t    *testing.T
	dir  string // the workspace
	bin  string // the only folder on PATH
	home string
	vars []string
}

func newDoctorEnv(t *testing.T) *doctorEnv {
	return &doctorEnv{t: t, dir: t.TempDir(), bin: t.TempDir(), home: t.TempDir()}
}

// fakeCLI puts an executable named name on PATH that prints version for
// --version.
func (e *doctorEnv) fakeCLI(name, version string) string {
	e.t.Helper()
	path := filepath.Join(e.bin, name)
	script := "#!/bin/sh\n[ \"$1\" = --version ] && echo '" + version + "' && exit 0\nexit 2\n"
	require.NoError(e.t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

func (e *doctorEnv) doctor(args ...string) result {
	e.t.Helper()
	cmd := exec.CommandContext(e.t.Context(), ralphBin, append([]string{"doctor"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append([]string{"PATH=" + e.bin, "HOME=" + e.home}, e.vars...)
	return runProcess(e.t, cmd)
}

func (e *doctorEnv) writeConfig(content string) {
	e.t.Helper()
	require.NoError(e.t, os.WriteFile(filepath.Join(e.dir, "ralph.yml"), []byte(content), 0o644))
}

func TestDoctorFindsTheDefaultBackend(t *testing.T) {
	e := newDoctorEnv(t)
	claude := e.fakeCLI("claude", "9.9.9 (Claude Code)")
	const secret = "sk-ant-never-print-me"
	e.vars = append(e.vars, "ANTHROPIC_API_KEY="+secret)

	r := e.doctor()

	require.Equal(t, 0, r.code, "no ralph.yml: claude is judged, and it is there; stderr: %s", r.stderr)
	assert.Regexp(t, `claude +found +`+claude+`\n +version +9\.9\.9 \(Claude Code\)\n +auth +env ANTHROPIC_API_KEY`, r.stdout)
	assert.Regexp(t, `codex +missing +codex backend: executable "codex" not found; install it with: npm install -g @openai/codex`, r.stdout)
	assert.Contains(t, r.stdout, "ready: claude (default: no ralph.yml here)")
	assert.NotContains(t, r.stdout+r.stderr, secret)
}

func TestDoctorMissingBackendExits1(t *testing.T) {
	e := newDoctorEnv(t)

	r := e.doctor()

	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, `cannot run: claude (default: no ralph.yml here): claude backend: executable "claude" not found; install it with: npm install -g @anthropic-ai/claude-code`)
	assert.Regexp(t, `claude +missing`, r.stdout)
	assert.Contains(t, r.stdout, "auth     none found; run `claude /login`")
}

func TestDoctorJudgesTheConfiguredBackends(t *testing.T) {
	t.Run("cli.backend installed", func(t *testing.T) {
		e := newDoctorEnv(t)
		e.fakeCLI("codex", "codex-cli 0.169.0")
		e.writeConfig("cli:\n  backend: codex\n")

		r := e.doctor()

		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stdout, "ready: codex (cli.backend in "+filepath.Join(e.dir, "ralph.yml")+")")
		assert.NotContains(t, r.stdout, "cannot run", "claude is missing, but the run does not use it")
	})
	t.Run("a hat's backend missing", func(t *testing.T) {
		e := newDoctorEnv(t)
		e.fakeCLI("codex", "codex-cli 0.169.0")
		e.writeConfig("cli:\n  backend: codex\nhats:\n  reviewer:\n    triggers: [build.done]\n    backend: gemini\n")

		r := e.doctor()

		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stdout, "ready: codex")
		assert.Contains(t, r.stdout, "cannot run: gemini (hats.reviewer.backend in "+filepath.Join(e.dir, "ralph.yml")+")")
	})
	t.Run("cli.command points elsewhere", func(t *testing.T) {
		e := newDoctorEnv(t)
		other := filepath.Join(t.TempDir(), "my-claude")
		require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\necho '1.2.3 (Claude Code)'\n"), 0o755))
		e.writeConfig("cli:\n  backend: claude\n  command: " + other + "\n")

		r := e.doctor()

		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		assert.Regexp(t, `claude +found +`+other+`\n +version +1\.2\.3`, r.stdout)
	})
	t.Run("--backend overrides the config", func(t *testing.T) {
		e := newDoctorEnv(t)
		e.fakeCLI("claude", "2.1.197 (Claude Code)")
		e.writeConfig("cli:\n  backend: claude\n")

		r := e.doctor("--backend", "pi")

		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stdout, "cannot run: pi (--backend)")
	})
	t.Run("auto picks the first installed CLI", func(t *testing.T) {
		e := newDoctorEnv(t)
		e.fakeCLI("gemini", "0.61.0")

		r := e.doctor("--backend", "auto")

		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stdout, "ready: auto → gemini (--backend)")
	})
	t.Run("unknown --backend exits 3 with a suggestion", func(t *testing.T) {
		r := newDoctorEnv(t).doctor("--backend", "clade")

		assert.Equal(t, 3, r.code)
		assert.Contains(t, r.stderr, `unknown backend "clade" (did you mean "claude"?)`)
	})
	t.Run("a broken config exits 3 after the listing", func(t *testing.T) {
		e := newDoctorEnv(t)
		e.writeConfig("cli:\n  backend: clod\n")

		r := e.doctor()

		assert.Equal(t, 3, r.code)
		assert.Contains(t, r.stdout, "claude ", "the listing still comes")
		assert.Contains(t, r.stderr, "ralph.yml:2")
	})
}

func TestDoctorJSON(t *testing.T) {
	e := newDoctorEnv(t)
	e.fakeCLI("claude", "2.1.197 (Claude Code)")
	e.vars = append(e.vars, "GEMINI_API_KEY=secret-gemini-key")

	r := e.doctor("--json")

	require.Equal(t, 0, r.code, r.stderr)
	var rep struct {
		Backends   []backends.Diagnosis `json:"backends"`
		Ready      bool                 `json:"ready"`
		Configured []struct {
			Backend string `json:"backend"`
			Ready   bool   `json:"ready"`
		} `json:"configured"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	assert.True(t, rep.Ready)
	require.Len(t, rep.Configured, 1)
	assert.Equal(t, "claude", rep.Configured[0].Backend)
	byName := map[string]backends.Diagnosis{}
	var names []string
	for _, d := range rep.Backends {
		byName[d.Name] = d
		names = append(names, d.Name)
	}
	assert.Equal(t, backends.Names(), names, "every backend, in order")
	assert.True(t, byName["claude"].Found)
	assert.Equal(t, "2.1.197 (Claude Code)", byName["claude"].Version)
	assert.False(t, byName["codex"].Found)
	assert.Equal(t, []backends.AuthSetting{{Kind: "env", Name: "GEMINI_API_KEY", Detail: "Gemini API key"}}, byName["gemini"].Auth)
	assert.NotContains(t, r.stdout, "secret-gemini-key")
}

func TestDoctorHelp(t *testing.T) {
	r := newDoctorEnv(t).doctor("--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "Examples:")
	assert.Contains(t, r.stdout, "ralph doctor --backend codex")
}

// The command backend's program is asked no version and has no known auth
// settings: ralph doctor says nothing about either rather than print
// "version unknown: " and "auth none found; " with nothing after.
func TestDoctorCommandBackendHasNoEmptyLines(t *testing.T) {
	e := newDoctorEnv(t)
	agent := e.fakeCLI("my-agent", "1.0")
	e.writeConfig("cli:\n  backend: command\n  command: " + agent + "\n")

	r := e.doctor()

	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "command     found    "+agent+"\n")
	assert.NotRegexp(t, `(?m)(: |; )$`, r.stdout, "no line ends in a label with nothing after it")
	assert.NotContains(t, r.stdout, "version  unknown")

	e.writeConfig("cli:\n  backend: command\n  command: /nonexistent/agent\n")
	r = e.doctor()
	assert.Equal(t, 1, r.code)
	assert.NotRegexp(t, `(?m)(: |; )$`, r.stdout)
}
