package autopilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// spareRepo is a repository with a spare in .worktrees/.spare/0, made as a
// run leaves one: a worktree detached at the base.
func spareRepo(t *testing.T) (repo, spare string) {
	t.Helper()
	repo = gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	spare = filepath.Join(repo, ".worktrees", SparesDir, "0")
	gittest.Run(t, repo, "worktree", "add", "-q", "--detach", spare, "HEAD")
	return repo, spare
}

// worktreeListed says whether git has a worktree registered at path.
func worktreeListed(t *testing.T, repo, path string) bool {
	t.Helper()
	return strings.Contains(gittest.Run(t, repo, "worktree", "list", "--porcelain"), "worktree "+path+"\n")
}

func TestCleanSparesRemovesThemAndTheirRegistrationButNoLinkThere(t *testing.T) {
	ctx := context.Background()
	repo, spare := spareRepo(t)
	// Another worktree, outside, that a link in .spare points at.
	victim := filepath.Join(t.TempDir(), "victim")
	gittest.Run(t, repo, "worktree", "add", "-q", "--detach", victim, "HEAD")
	link := filepath.Join(filepath.Dir(spare), "1")
	require.NoError(t, os.Symlink(victim, link))

	list := SpareWorktrees(repo, ".worktrees")
	require.Len(t, list, 1, "the link is no spare")
	assert.Equal(t, WorktreeStatus{Kind: WorktreeSpare, LoopWorktreeStatus: LoopWorktreeStatus{LoopWorktree: LoopWorktree{Name: "0", Dir: spare}}}, list[0])

	removed, kept, err := CleanSpares(ctx, repo, ".worktrees", time.Now())
	require.NoError(t, err)
	assert.Empty(t, kept)
	require.Len(t, removed, 1)
	assert.Equal(t, spare, removed[0].Dir)
	assert.NoDirExists(t, spare)
	assert.False(t, worktreeListed(t, repo, spare), "git forgot the spare")
	assert.FileExists(t, filepath.Join(victim, "README.md"), "nothing removed through the link")
	assert.True(t, worktreeListed(t, repo, victim))
	_, err = os.Lstat(link)
	assert.NoError(t, err, "the link is left as it is")
}

func TestCleanSparesKeepsThemWhileAnAutopilotRuns(t *testing.T) {
	ctx := context.Background()
	repo, spare := spareRepo(t)
	lock, err := runfiles.AcquireLock(ctx, runfiles.In(repo).AutopilotLock(), runfiles.LockInfo{PID: os.Getpid(), StartedAt: time.Now()}, runfiles.LockOptions{})
	require.NoError(t, err)
	removed, kept, err := CleanSpares(ctx, repo, ".worktrees", time.Now())
	require.NoError(t, err)
	assert.Empty(t, removed)
	require.Len(t, kept, 1)
	assert.Contains(t, kept[0].Why, "an autopilot runs in this repository")
	assert.DirExists(t, spare)
	require.NoError(t, lock.Release())

	removed, _, err = CleanSpares(ctx, repo, ".worktrees", time.Now())
	require.NoError(t, err)
	assert.Len(t, removed, 1, "once it has stopped")
	assert.NoDirExists(t, filepath.Dir(spare), "the spares' directory goes with them")
}

func TestCleanWorktreesCleansSparesOnlyWhenGivenNoNames(t *testing.T) {
	ctx := context.Background()
	repo, spare := spareRepo(t)
	all, err := Worktrees(ctx, repo, ".worktrees", time.Now())
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, WorktreeSpare, all[0].Kind)
	_, err = FindWorktree(all, "0")
	assert.Error(t, err, "a spare is named by no one")

	_, _, err = CleanWorktrees(ctx, repo, ".worktrees", []string{"0"}, true, time.Now())
	require.Error(t, err)
	assert.DirExists(t, spare)
	removed, kept, err := CleanWorktrees(ctx, repo, ".worktrees", nil, false, time.Now())
	require.NoError(t, err)
	assert.Empty(t, kept)
	require.Len(t, removed, 1)
	assert.Equal(t, WorktreeSpare, removed[0].Kind)
	assert.NoDirExists(t, spare)
}

// .spare itself a link: nothing in it is a spare, to list, take or remove.
func TestSparesDirectoryThatIsALinkIsNotFollowed(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	elsewhere := t.TempDir()
	victim := filepath.Join(elsewhere, "0")
	gittest.Run(t, repo, "worktree", "add", "-q", "--detach", victim, "HEAD")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".worktrees"), 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(repo, ".worktrees", SparesDir)))

	assert.Empty(t, SpareWorktrees(repo, ".worktrees"))
	assert.Empty(t, newSpares(filepath.Join(repo, ".worktrees")).free)
	removed, kept, err := CleanSpares(ctx, repo, ".worktrees", time.Now())
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.Empty(t, kept)
	assert.FileExists(t, filepath.Join(victim, "README.md"))
}

// A run takes over only the directories a run left, numbering past
// whatever else is there.
func TestNewSparesTakesNoLink(t *testing.T) {
	worktrees := t.TempDir()
	dir := filepath.Join(worktrees, SparesDir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1"), 0o755))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, "4")))
	s := newSpares(worktrees)
	assert.Equal(t, []string{filepath.Join(dir, "1")}, s.free)
	assert.Equal(t, filepath.Join(dir, "5"), s.place())
}
