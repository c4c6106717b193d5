package autopilot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// gateMerges puts a git on PATH whose merge-tree waits until the file it
// returns exists: a test holds a merge under way while other tasks
// finish.
func gateMerges(t *testing.T) (gate string) {
	real, err := exec.LookPath("git")
	require.NoError(t, err)
	bin := t.TempDir()
	gate = filepath.Join(t.TempDir(), "open")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = merge-tree ]; then
    i=0
    while [ ! -e %q ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done
    break
  fi
done
exec %q "$@"
`, gate, real)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return gate
}

// Tasks that finish while a merge is made are merged on its result, not
// on the base branch, and land with it: the base branch moves once, by a
// fast-forward to the last, and their closes are one commit. Each is
// still its own merge commit, recorded merged and completed once.
func TestMergesMadeWhileOneIsUnderWayLandTogether(t *testing.T) {
	gate := gateMerges(t)
	h := newHarness(t, task("a", 1), task("b", 2), task("c", 3))
	h.start(t.Context(), h.settings(3))
	start := strings.TrimSpace(gittest.Run(t, h.repo, "rev-parse", "HEAD"))
	loops := map[string]*fakeLoop{}
	for range 3 {
		l := h.loop()
		loops[l.job.Task] = l
	}
	loops["a"].complete()
	h.next(runfiles.TopicMergeStarted)
	for _, id := range []string{"b", "c"} {
		loops[id].complete()
		require.Equal(t, id, payloadOf(h.next(runfiles.TopicTaskFinished)).Task)
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 3}, res)

	subjects := gittest.Run(t, h.repo, "log", "--first-parent", "--format=%s")
	assert.Equal(t, "ralph: close a, b, c\nralph: merge c (Task c)\nralph: merge b (Task b)\nralph: merge a (Task a)\n"+
		"ralph: claim c\nralph: claim b\nralph: claim a\nstart", subjects,
		"one close commit for the three merges, each made on the one before")
	moves := gittest.Run(t, h.repo, "reflog", "--format=%gs", "refs/heads/"+gittest.Run(t, h.repo, "branch", "--show-current"))
	assert.Equal(t, 1, strings.Count(moves, "merge"), "the base branch moved to the merges once:\n%s", moves)
	for _, id := range []string{"a", "b", "c"} {
		assert.FileExists(t, filepath.Join(h.repo, id+".txt"))
		assert.Equal(t, 1, h.source.closed[id], "%s closed once", id)
	}
	assert.Empty(t, strings.TrimSpace(gittest.Run(t, h.repo, "status", "--porcelain")), "the checkout is left clean")
	assert.NotEqual(t, start, strings.TrimSpace(gittest.Run(t, h.repo, "rev-parse", "HEAD")))
}
