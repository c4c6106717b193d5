package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// A done task's refs are deleted in one push, the ones the remote lacks
// among them; a remote that refuses to delete a ref it lacks (a hook here,
// some forges' own checks) gets only those it has.
func TestDeleteRemoteRefs(t *testing.T) {
	for _, refuses := range []bool{false, true} {
		name := "warns of a missing ref"
		if refuses {
			name = "refuses to delete a missing ref"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			url, base := gittest.SharedRemote(t)
			repo := git.Repo{Dir: filepath.Join(t.TempDir(), "coordinator")}
			gittest.Run(t, ".", "clone", "--quiet", url, repo.Dir)
			gittest.Run(t, repo.Dir, "push", "--quiet", url, base+":"+WIPRef("t-1"), base+":refs/heads/"+TaskBranch("t-1"))
			if refuses {
				// Refuses any push that deletes a ref the remote does not
				// have: a deletion's old value is the zero id.
				hook := "#!/bin/sh\nwhile read old new ref; do\n  [ \"$old\" = 0000000000000000000000000000000000000000 ] && [ \"$new\" = \"$old\" ] && exit 1\ndone\nexit 0\n"
				require.NoError(t, os.WriteFile(filepath.Join(url, "hooks", "pre-receive"), []byte(hook), 0o755))
			}

			refs := []string{WIPRef("t-1"), MergeRef("t-1"), "refs/heads/" + TaskBranch("t-1")}
			require.NoError(t, deleteRemoteRefs(ctx, repo, url, refs))
			for _, ref := range refs {
				assert.Empty(t, gittest.Run(t, repo.Dir, "ls-remote", url, ref), ref)
			}
		})
	}
}

// A task's start is its worktree's HEAD when there is nothing to commit
// and no merge under way; what is uncommitted is committed first, and a
// merge a retry left is aborted and sent as the commit to merge.
func TestStart(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	repo := git.Repo{Dir: filepath.Join(t.TempDir(), "coordinator")}
	gittest.Run(t, ".", "clone", "--quiet", url, repo.Dir)
	dir := filepath.Join(t.TempDir(), "t-1")
	require.NoError(t, repo.AddWorktreeAt(ctx, dir, "ralph/t-1", base))
	pin, err := repo.WorktreePin(ctx, dir)
	require.NoError(t, err)
	job := autopilot.Job{Task: "t-1", Attempt: 1, Dir: dir, Pin: pin}

	head, merge, err := start(ctx, job)
	require.NoError(t, err)
	assert.Equal(t, base, head)
	assert.Empty(t, merge)

	gittest.WriteFile(t, dir, "left.txt", "uncommitted\n")
	head, merge, err = start(ctx, job)
	require.NoError(t, err)
	assert.Equal(t, gittest.Run(t, dir, "rev-parse", "HEAD"), head)
	assert.NotEqual(t, base, head)
	assert.Equal(t, "ralph: the start of t-1's attempt 1", gittest.Run(t, dir, "log", "-1", "--format=%s"))
	assert.Empty(t, merge)

	// A retry: the base moved on with a change of its own to the same
	// file, merged here with its conflict left for the loop.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, ".", "clone", "--quiet", url, other)
	moved := gittest.CommitFile(t, other, "left.txt", "the base's\n", "the base moves on")
	gittest.Run(t, dir, "fetch", "--quiet", other, "HEAD")
	_, _ = gittest.Output(dir, "merge", "--no-edit", moved)
	require.FileExists(t, filepath.Join(pin.GitDir, "MERGE_HEAD"))
	job.Attempt = 2
	retried, merge, err := start(ctx, job)
	require.NoError(t, err)
	assert.Equal(t, head, retried, "the merge aborted, nothing left to commit")
	assert.Equal(t, moved, merge)
	assert.NoFileExists(t, filepath.Join(pin.GitDir, "MERGE_HEAD"))
}
