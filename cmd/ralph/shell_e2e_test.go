package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pathWithoutSh is a PATH that has git but no sh, as Windows has without
// Git for Windows' bin folder on it.
func pathWithoutSh(t *testing.T) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	if err := os.Symlink(gitBin, filepath.Join(dir, filepath.Base(gitBin))); err != nil {
		t.Skipf("cannot link git into a PATH of its own: %v", err)
	}
	return dir
}

// A run whose config has shell commands is refused before its agent
// starts when there is no sh to run them with, with the fix; with sh on
// PATH the same run goes through.
func TestE2ENoShellRefusesARunWithShellCommands(t *testing.T) {
	t.Parallel()
	config := linkConfig + agentCLI() + "acceptance_criteria:\n  - {type: command_succeeds, name: tests, command: \"true\"}\n" +
		"hooks:\n  - {name: notify, on: [loop.start], run: \"true\"}\n"

	w := newWorkspace(t)
	w.write("ralph.yml", config)
	w.script(doneScript())
	r := w.ralphEnv([]string{"PATH=" + pathWithoutSh(t)}, "loop")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "ralph: error: the config has shell commands, which ralph runs with sh, and there is no sh on PATH")
	assert.Contains(t, r.stderr, "hook notify; acceptance_criteria: tests")
	assert.Contains(t, r.stderr, "ralph: hint: put the directory that holds sh")
	assert.NoFileExists(t, filepath.Join(w.state, "prompt-1.txt"), "no agent ran")

	r = w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(w.state, "prompt-1.txt"))
}
