package autopilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// With no verify, a merge is made of trees, with no scratch worktree, and
// is the commit the checkout would have made: a merge commit, or with
// squash one commit on the base; a branch that changed the tracker's file
// is merged in the checkout, which puts the base's file back.
func TestAMergeWithNothingToVerifyNeedsNoCheckout(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		mode    string
		tracker bool // the task's branch also changes TODO.md
		parents int
	}{{"merge", false, 2}, {"squash", false, 1}, {"merge", true, 2}} {
		t.Run(c.mode+map[bool]string{true: " touching the tracker"}[c.tracker], func(t *testing.T) {
			dir := gittest.NewRepo(t)
			gittest.CommitFile(t, dir, "TODO.md", "- [ ] a\n", "start")
			home := gittest.Run(t, dir, "branch", "--show-current")
			gittest.Run(t, dir, "checkout", "-q", "-b", "ralph/a")
			gittest.CommitFile(t, dir, "a.txt", "a\n", "do a")
			if c.tracker {
				gittest.CommitFile(t, dir, "TODO.md", "- [x] a, says the agent\n", "tick it")
			}
			gittest.Run(t, dir, "checkout", "-q", home)
			base := gittest.CommitFile(t, dir, "TODO.md", "- [ ] a (claimed)\n", "claim a")
			worktrees := filepath.Join(dir, ".worktrees")
			m := &merger{repo: git.Repo{Dir: dir}, base: home, worktrees: worktrees, tracker: []string{"TODO.md"}, mode: c.mode}

			res, err := m.prepare(ctx, runfiles.TaskMerge{TaskSlot: runfiles.TaskSlot{Task: "a", Branch: "ralph/a"}}, git.WithTaskTrailer(git.MergeSubject("a", "A"), "a"), "")
			require.NoError(t, err)
			require.NotEmpty(t, res.Commit)
			assert.Equal(t, base, res.Base)
			assert.Len(t, strings.Fields(gittest.Run(t, dir, "log", "-1", "--format=%P", res.Commit)), c.parents)
			assert.Equal(t, "a", gittest.Run(t, dir, "show", res.Commit+":a.txt"))
			assert.Equal(t, "- [ ] a (claimed)", gittest.Run(t, dir, "show", res.Commit+":TODO.md"), "the tracker's file as the base has it")
			merged, err := m.repo.MergedTasks(ctx, "", res.Commit)
			require.NoError(t, err)
			assert.Equal(t, res.Commit, merged["a"])
			assert.Equal(t, base, gittest.Run(t, dir, "rev-parse", home), "the base branch does not move")
			_, err = os.Stat(m.scratchDir("a"))
			assert.True(t, os.IsNotExist(err), "no scratch worktree is left")
		})
	}
}
