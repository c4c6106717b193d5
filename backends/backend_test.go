package backends

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	names := Names()
	assert.True(t, slices.IsSorted(names))
	assert.Contains(t, names, "claude")
	assert.Contains(t, names, "command")
	assert.NotContains(t, names, "auto", "auto picks a CLI; it is not one")
	assert.NotContains(t, names, "custom", "custom is an alias")
}

func TestNewUnknownName(t *testing.T) {
	tests := []struct {
		name       string
		suggestion string
	}{
		{name: "claud", suggestion: "claude"},
		{name: "comand", suggestion: "command"},
		{name: "Aut", suggestion: "auto"},
		{name: "emacs"},
		{name: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{Name: tt.name})
			var unknown *UnknownBackendError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, tt.suggestion, unknown.Suggestion)
			assert.Contains(t, unknown.Known, "claude")
			assert.Contains(t, unknown.Known, "custom")
			assert.Contains(t, unknown.Known, "auto")
			assert.Contains(t, err.Error(), "known backends: ")
			if tt.suggestion != "" {
				assert.Contains(t, err.Error(), `did you mean "`+tt.suggestion+`"?`)
			} else {
				assert.NotContains(t, err.Error(), "did you mean")
			}
		})
	}
}

func TestNewOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "command needs a program", opts: Options{Name: "command"}, want: "set cli.command"},
		{name: "custom needs a program too", opts: Options{Name: "custom", Command: "  "}, want: "set cli.command"},
		{name: "bad prompt mode", opts: Options{Name: "claude", PromptMode: "file"}, want: `prompt mode "file"`},
		{name: "negative grace", opts: Options{Name: "claude", KillGrace: -1}, want: "kill grace"},
		{name: "auto with a command", opts: Options{Name: "auto", Command: "x"}, want: "backend auto cannot be combined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestNewCustomIsCommand(t *testing.T) {
	b, err := New(Options{Name: "custom", Command: "my-agent"})
	require.NoError(t, err)
	assert.Equal(t, "command", b.Name())
}

// fakePath makes a PATH holding empty executables with the given names.
func fakePath(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755))
	}
	return dir
}

func TestNewAuto(t *testing.T) {
	t.Run("picks the first installed in order", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t, "claude", "gemini"))
		b, err := New(Options{Name: "auto"})
		require.NoError(t, err)
		assert.Equal(t, "claude", b.Name())
	})
	t.Run("skips what is not installed", func(t *testing.T) {
		if _, ok := clis["gemini"]; !ok {
			t.Skip("gemini is not registered")
		}
		t.Setenv("PATH", fakePath(t, "gemini", "qwen"))
		b, err := New(Options{Name: "auto"})
		require.NoError(t, err)
		assert.Equal(t, "gemini", b.Name())
	})
	t.Run("none installed", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t))
		_, err := New(Options{Name: "auto"})
		var missing *MissingBinaryError
		require.ErrorAs(t, err, &missing)
		assert.Equal(t, "auto", missing.Backend)
		assert.Contains(t, err.Error(), "claude")
	})
}

func TestCheck(t *testing.T) {
	t.Run("installed", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t, "claude"))
		b, err := New(Options{Name: "claude"})
		require.NoError(t, err)
		assert.NoError(t, b.Check())
	})
	t.Run("missing from PATH", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t))
		b, err := New(Options{Name: "claude"})
		require.NoError(t, err)
		err = b.Check()
		var missing *MissingBinaryError
		require.ErrorAs(t, err, &missing)
		assert.Equal(t, "claude", missing.Backend)
		assert.Equal(t, "claude", missing.Binary)
		assert.True(t, errors.Is(err, exec.ErrNotFound))
		assert.Equal(t, `claude backend: executable "claude" not found; install it with: npm install -g @anthropic-ai/claude-code`, err.Error())
	})
	t.Run("command names a missing path", func(t *testing.T) {
		b, err := New(Options{Name: "command", Command: "/nonexistent/agent"})
		require.NoError(t, err)
		var missing *MissingBinaryError
		require.ErrorAs(t, b.Check(), &missing)
		assert.Equal(t, "/nonexistent/agent", missing.Binary)
		assert.Contains(t, missing.Error(), "cli.command must name an installed program")
	})
	t.Run("Command overrides the CLI's binary", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t, "my-claude"))
		b, err := New(Options{Name: "claude", Command: "my-claude"})
		require.NoError(t, err)
		assert.NoError(t, b.Check())
	})
}

func TestInvocationEnvOrder(t *testing.T) {
	b, err := New(Options{Name: "command", Command: "x", Env: map[string]string{"B": "2", "A": "1"}})
	require.NoError(t, err)
	inv, _ := b.invocation("/bin/x", "p")
	assert.Equal(t, []string{"A=1", "B=2"}, inv.env, "Options.Env sorted, for a stable command line")
	assert.Equal(t, defaultKillGrace, inv.grace)
}

func TestChoicesOfferAutoNotCustom(t *testing.T) {
	got := Choices()
	assert.Contains(t, got, "auto")
	assert.Contains(t, got, "command")
	assert.NotContains(t, got, "custom")
	assert.True(t, slices.IsSorted(got), "%v", got)
}
