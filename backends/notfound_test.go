package backends

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// checkMissing runs Check and returns the *MissingBinaryError it must give.
func checkMissing(t *testing.T, opts Options) *MissingBinaryError {
	t.Helper()
	b, err := New(opts)
	require.NoError(t, err)
	var missing *MissingBinaryError
	require.ErrorAs(t, b.Check(), &missing)
	return missing
}

func TestCheckSaysWhyABinaryCannotRun(t *testing.T) {
	t.Run("a script without the execute bit", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "agent.sh")
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644))
		missing := checkMissing(t, Options{Name: "command", Command: script})
		assert.Equal(t, `command backend: "`+script+`" exists but is not executable`, missing.Problem())
		assert.Equal(t, "make it executable: chmod +x "+script, missing.Hint())
		assert.NotContains(t, missing.Error(), "not found")
	})
	t.Run("a directory", func(t *testing.T) {
		dir := t.TempDir()
		missing := checkMissing(t, Options{Name: "command", Command: dir})
		assert.Contains(t, missing.Problem(), "is a directory")
	})
	t.Run("a file here named without ./", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("#!/bin/sh\n"), 0o755))
		t.Chdir(dir)
		t.Setenv("PATH", fakePath(t))
		missing := checkMissing(t, Options{Name: "command", Command: "agent.sh"})
		assert.Equal(t, `command backend: "agent.sh" is not on PATH`, missing.Problem())
		assert.Contains(t, missing.Hint(), "set cli.command to ./agent.sh")
	})
	t.Run("a program and its arguments in cli.command", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t, "sh"))
		missing := checkMissing(t, Options{Name: "command", Command: "sh ./x.sh --fast"})
		assert.Contains(t, missing.Problem(), "cli.args")
		assert.Equal(t, `set command: sh and args: ["./x.sh", "--fast"]`, missing.Hint())
	})
	t.Run("spaces, but the first word is no program either", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t))
		missing := checkMissing(t, Options{Name: "command", Command: "nosuch ./x.sh"})
		assert.Empty(t, missing.Fix)
		assert.Contains(t, missing.Error(), "not found")
	})
	t.Run("an agent CLI's arguments come first, so no split is offered", func(t *testing.T) {
		t.Setenv("PATH", fakePath(t, "npx"))
		missing := checkMissing(t, Options{Name: "claude", Command: "npx claude"})
		assert.Empty(t, missing.Fix)
		assert.Contains(t, missing.Hint(), "npm install")
	})
}

func TestRunSaysAScriptsInterpreterIsMissing(t *testing.T) {
	script := filepath.Join(t.TempDir(), "agent.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/nonexistent/interpreter\necho hi\n"), 0o755))
	b, err := New(Options{Name: "command", Command: script})
	require.NoError(t, err)
	_, err = b.Run(t.Context(), events.AgentRun{Dir: t.TempDir()}, nil)
	var missing *MissingBinaryError
	require.ErrorAs(t, err, &missing)
	assert.Contains(t, missing.Problem(), "its interpreter (#!/nonexistent/interpreter) was not found")
	assert.Contains(t, missing.Hint(), "#!/bin/sh")
}
