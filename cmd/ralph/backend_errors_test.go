package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLoopSaysWhyTheCommandCannotRun(t *testing.T) {
	t.Parallel()
	t.Run("a script without the execute bit", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("agent.sh", "#!/bin/sh\necho hi\n") // 0644
		w.write("ralph.yml", "cli:\n  backend: command\n  command: ./agent.sh\nevent_loop:\n  prompt: hi\n")
		r := w.ralph("loop")
		assert.Equal(t, 3, r.code)
		// The relative path is resolved against the config's directory.
		script := filepath.Join(w.dir, "agent.sh")
		assert.Contains(t, r.stderr, `ralph: error: command backend: "`+script+`" exists but is not executable`+"\n")
		assert.Contains(t, r.stderr, "ralph: hint: make it executable: chmod +x "+script+"\n")
		assert.NotContains(t, r.stderr, "not found")
	})
	t.Run("a program and its arguments in cli.command", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("x.sh", "echo hi\n")
		w.write("ralph.yml", "cli:\n  backend: command\n  command: \"sh ./x.sh\"\nevent_loop:\n  prompt: hi\n")
		r := w.ralph("loop")
		assert.Equal(t, 3, r.code)
		assert.Contains(t, r.stderr, "cli.args")
		assert.Contains(t, r.stderr, `ralph: hint: set command: sh and args: ["./x.sh"]`)
	})
	t.Run("the hint is not repeated on the error line", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", "cli:\n  backend: command\n  command: /nonexistent/agent\nevent_loop:\n  prompt: hi\n")
		r := w.ralph("loop")
		assert.Equal(t, 3, r.code)
		assert.Equal(t, "ralph: error: command backend: executable \"/nonexistent/agent\" not found\n"+
			"ralph: hint: cli.command must name an installed program: a name on PATH, or a path (a relative one is relative to the config file that sets it)\n", r.stderr)
	})
}
