package main

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newPlainWorkspace is a workspace that is not a git repository, as a
// user's scratch directory or an unpacked tarball is.
func newPlainWorkspace(t *testing.T) *workspace {
	t.Helper()
	w := &workspace{t: t, dir: t.TempDir(), state: t.TempDir()}
	cmd := exec.Command("git", "rev-parse", "--git-dir")
	cmd.Dir = w.dir
	require.Error(t, cmd.Run(), "the test needs a directory outside any git repository")
	return w
}

const plainConfig = `event_loop:
  prompt: Keep notes in notes.txt.
  max_iterations: 4
  stuck_threshold: 2
`

// Outside git, ralph judges progress by the files themselves: an agent
// that edits a file every iteration works on until the limit, and one that
// only talks is stuck.
func TestE2EProgressWithoutGit(t *testing.T) {
	t.Parallel()
	t.Run("an agent that changes a file each iteration is not stuck", func(t *testing.T) {
		w := newPlainWorkspace(t)
		w.write("ralph.yml", plainConfig+agentCLI())
		w.script(agentScript{Steps: []step{{Append: map[string]string{"notes.txt": "note {{run}}\n"}, Say: "still working"}}})

		r := w.ralph("loop")

		assert.Equal(t, 2, r.code, r.stderr)
		assert.Equal(t, []string{"ralph task.start", "finished ralph success", "finished ralph success",
			"finished ralph success", "finished ralph success", "terminate max_iterations"}, w.flow())
	})
	t.Run("an agent that rewrites the same content is stuck", func(t *testing.T) {
		w := newPlainWorkspace(t)
		w.write("ralph.yml", plainConfig+agentCLI())
		w.script(agentScript{Steps: []step{{Write: map[string]string{"notes.txt": "the same note\n"}, Say: "still working"}}})

		r := w.ralph("loop")

		assert.Equal(t, 1, r.code, r.stderr)
		// The first iteration created notes.txt: that was progress.
		assert.Equal(t, []string{"ralph task.start", "finished ralph success", "finished ralph success",
			"finished ralph success", "terminate stuck"}, w.flow())
	})
	t.Run("an agent that changes nothing is stuck", func(t *testing.T) {
		w := newPlainWorkspace(t)
		w.write("ralph.yml", plainConfig+agentCLI())
		w.script(agentScript{Steps: []step{say("I am not sure what to do.")}})

		r := w.ralph("loop")

		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "2 iterations in a row made no progress")
		assert.Equal(t, []string{"ralph task.start", "finished ralph success", "finished ralph success", "terminate stuck"}, w.flow())
	})
}
