package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ralphFrom runs ralph with cwd as its working directory, which need not be
// the workspace (ralph -C DIR …).
func (w *workspace) ralphFrom(cwd string, args ...string) result {
	w.t.Helper()
	cmd := exec.CommandContext(w.t.Context(), ralphBin, args...)
	cmd.Dir = cwd
	return runProcess(w.t, cmd)
}

// executable writes a shell script into the workspace, ready to run.
func (w *workspace) executable(name, body string) {
	w.t.Helper()
	w.write(name, "#!/bin/sh\n"+body)
	require.NoError(w.t, os.Chmod(filepath.Join(w.dir, name), 0o755))
}

// relativeCommands is a workspace whose agents are named by paths relative
// to their configs: cli.command ./agent.sh beside ralph.yml, and the
// builder hat's ./builder.sh beside the hat file config/hats.yml.
func relativeCommands(t *testing.T) *workspace {
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: greet\n  completion_confirmations: 1\n  max_iterations: 5\n"+
		"cli:\n  backend: command\n  command: ./agent.sh\n")
	w.write("config/hats.yml", "hats:\n  builder:\n    triggers: [task.start]\n    publishes: [build.done]\n"+
		"    backend: {backend: command, command: ./builder.sh}\n")
	w.executable("agent.sh", "echo coordinator >> ran.txt\necho '<event topic=\"LOOP_COMPLETE\">done</event>'\n")
	w.executable("config/builder.sh", "echo builder >> ran.txt\necho '<event topic=\"build.done\">built</event>'\n")
	return w
}

// ralph -C DIR from another directory runs the agents the configs name,
// each relative to its own config file, not to where ralph was started.
func TestE2ELoopWithDirFlagFindsRelativeCommands(t *testing.T) {
	w := relativeCommands(t)

	r := w.ralphFrom(t.TempDir(), "-C", w.dir, "loop", "-c", "ralph.yml", "-c", "config/hats.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "builder\ncoordinator\n", w.read("ran.txt"), "both agents ran, in the workspace")
	assert.Equal(t, "terminate completed", last(w.flow()))
}

func TestE2EDoctorWithDirFlagFindsRelativeCommands(t *testing.T) {
	w := relativeCommands(t)

	r := w.ralphFrom(t.TempDir(), "-C", w.dir, "doctor", "-c", "ralph.yml", "-c", "config/hats.yml")

	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ready: command (cli.backend in ")
	assert.Contains(t, r.stdout, "ready: command (hats.builder.backend in ")
	assert.NotContains(t, r.stdout, "cannot run")
}

// A bare name is still looked up on PATH, not beside the config.
func TestE2EBareCommandIsLookedUpOnPath(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: greet\ncli:\n  backend: command\n  command: agent-not-on-path\n")
	w.executable("agent-not-on-path", "exit 0\n")

	r := w.ralph("loop")

	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, `"agent-not-on-path" is not on PATH`)
}
