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

func TestLoopNameOfAnObjective(t *testing.T) {
	for objective, want := range map[string]string{
		"Add a --json flag to the export command":      "add-json-flag-export",
		"# Task\n\nFix the flaky export test, please.": "task-fix-flaky-export",
		"Größe der Übersicht ändern":                   "grosse-der-ubersicht",
		"":                                             "loop",
		"the a to":                                     "loop",
		"Internationalisation everywhere":              "internationalisation",
		strings.Repeat("x", 25) + " and more":          strings.Repeat("x", 24),
		"Add ISO week numbers to the report header":    "add-iso-week-numbers",
	} {
		got := nameOf(objective)
		assert.Equal(t, want, got, "%q", objective)
		assert.NoError(t, CheckLoopName(got), "%q", objective)
	}
}

// The loops' worktrees go where no task's worktree or branch can: a task
// id cannot start with '.', and a task branch ralph/loop could not be
// beside a loop branch ralph/loop/NAME.
func TestLoopWorktreesCannotBeTasks(t *testing.T) {
	lw := LoopWorktreeIn("/repo", ".worktrees", "fix")
	assert.Equal(t, LoopWorktree{Name: "fix", Branch: "ralph-loop/fix", Dir: filepath.FromSlash("/repo/.worktrees/.loops/fix")}, lw)
	assert.Error(t, CheckLoopName(LoopsDir), "no task id is the loops' directory")
	assert.Equal(t, filepath.FromSlash("/elsewhere/.loops/fix"), LoopWorktreeIn("/repo", "/elsewhere", "fix").Dir)

	ctx := context.Background()
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	gittest.Run(t, repo, "branch", "ralph/loop")
	made, _, err := MakeLoopWorktree(ctx, repo, ".worktrees", LoopWorktreeIn(repo, ".worktrees", "x"))
	require.NoError(t, err)
	assert.True(t, made)
	_, err = gittest.Output(repo, "branch", "ralph/loop/x")
	assert.Error(t, err, "git refuses ralph/loop/x beside ralph/loop, which is why a loop's branch is not under ralph/")
}

func TestMakeLoopWorktree(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t)
	gittest.Run(t, repo, "checkout", "-q", "-b", "main")
	head := gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	lw := LoopWorktreeIn(repo, ".worktrees", "fix")

	made, base, err := MakeLoopWorktree(ctx, repo, ".worktrees", lw)
	require.NoError(t, err)
	assert.True(t, made)
	assert.Equal(t, "main", base)
	assert.Equal(t, head, gittest.Run(t, lw.Dir, "rev-parse", "HEAD"))
	assert.Equal(t, "ralph-loop/fix", gittest.Run(t, lw.Dir, "branch", "--show-current"))
	assert.Equal(t, "main", gittest.Run(t, repo, "config", "branch.ralph-loop/fix.ralphbase"))
	assert.Empty(t, gittest.Run(t, repo, "status", "--porcelain"), "git ignores the worktrees directory")

	gittest.CommitFile(t, lw.Dir, "fix.txt", "fixed\n", "fix it")
	made, _, err = MakeLoopWorktree(ctx, repo, ".worktrees", lw)
	require.NoError(t, err)
	assert.False(t, made, "a worktree that is there is used as it is")

	// Its worktree removed by hand, the branch's work goes on in a new one.
	gittest.Run(t, repo, "worktree", "remove", lw.Dir)
	made, base, err = MakeLoopWorktree(ctx, repo, ".worktrees", lw)
	require.NoError(t, err)
	assert.True(t, made)
	assert.Equal(t, "main", base, "what the branch was made from is kept")
	assert.FileExists(t, filepath.Join(lw.Dir, "fix.txt"))

	// From a detached HEAD, the base is its commit.
	gittest.Run(t, repo, "checkout", "-q", "--detach")
	_, base, err = MakeLoopWorktree(ctx, repo, ".worktrees", LoopWorktreeIn(repo, ".worktrees", "detached"))
	require.NoError(t, err)
	assert.Equal(t, head, base)

	// A directory of someone else's in its place is left alone.
	other := LoopWorktreeIn(repo, ".worktrees", "other")
	gittest.WriteFile(t, other.Dir, "mine.txt", "mine\n")
	_, _, err = MakeLoopWorktree(ctx, repo, ".worktrees", other)
	var refused *PreconditionError
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, refused.Problem, "is there and is not a worktree of this repository")
	assert.FileExists(t, filepath.Join(other.Dir, "mine.txt"))
}

func TestNewLoopNameTakesAFreeName(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	assert.Equal(t, "fix-bug", NewLoopName(ctx, repo, ".worktrees", "Fix the bug"))
	_, _, err := MakeLoopWorktree(ctx, repo, ".worktrees", LoopWorktreeIn(repo, ".worktrees", "fix-bug"))
	require.NoError(t, err)
	gittest.Run(t, repo, "branch", "ralph-loop/fix-bug-2")
	assert.Equal(t, "fix-bug-3", NewLoopName(ctx, repo, ".worktrees", "Fix the bug"), "a worktree or a branch takes a name")
}

func TestKeepLoopWorktree(t *testing.T) {
	n := func(i int) *int { return &i }
	base := LoopWorktreeStatus{LoopWorktree: LoopWorktree{Name: "fix", Branch: "ralph-loop/fix", Dir: "/r/.worktrees/.loops/fix"}, Base: "main", Ahead: n(0)}
	with := func(change func(*LoopWorktreeStatus)) LoopWorktreeStatus {
		st := base
		change(&st)
		return st
	}
	cases := []struct {
		name  string
		st    LoopWorktreeStatus
		keep  string // "" when removed
		force string // what --force keeps
	}{
		{name: "merged", st: base},
		{name: "running", st: with(func(s *LoopWorktreeStatus) { s.Running, s.PID = true, 42 }),
			keep: "its loop is running (pid 42): stop it first (ralph stop -C /r/.worktrees/.loops/fix)", force: "its loop is running"},
		{name: "unfinished", st: with(func(s *LoopWorktreeStatus) { s.Unfinished = true }),
			keep: "its run is unfinished: go on with it (ralph loop --worktree fix --resume), or remove it with --force"},
		{name: "uncommitted", st: with(func(s *LoopWorktreeStatus) { s.Uncommitted = 2 }),
			keep: "2 uncommitted changes in it: commit them, or remove it with --force"},
		{name: "ahead", st: with(func(s *LoopWorktreeStatus) { s.Ahead = n(1) }),
			keep: "1 commit not merged into main: merge ralph-loop/fix, or remove it with --force"},
		{name: "base gone", st: with(func(s *LoopWorktreeStatus) { s.Ahead = nil }),
			keep: "whether ralph-loop/fix is merged cannot be told (main is not there): remove it with --force"},
		{name: "no base recorded", st: with(func(s *LoopWorktreeStatus) { s.Ahead, s.Base = nil, "" }),
			keep: "whether ralph-loop/fix is merged cannot be told (its base is not there): remove it with --force"},
		{name: "no branch", st: with(func(s *LoopWorktreeStatus) { s.NoBranch, s.Ahead = true, nil })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.keep, keepLoopWorktree(c.st, false))
			if c.force == "" {
				assert.Empty(t, keepLoopWorktree(c.st, true))
			} else {
				assert.Contains(t, keepLoopWorktree(c.st, true), c.force)
			}
		})
	}
}

// A worktree is removed only while its loop's lock is this process's: a
// loop that holds it keeps its worktree, --force or not.
func TestCleanLoopWorktreesNeverRemovesARunningLoop(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	for _, name := range []string{"idle", "held"} {
		_, _, err := MakeLoopWorktree(ctx, repo, ".worktrees", LoopWorktreeIn(repo, ".worktrees", name))
		require.NoError(t, err)
	}
	held := LoopWorktreeIn(repo, ".worktrees", "held")
	lock, err := runfiles.AcquireLock(ctx, runfiles.In(held.Dir).Lock(), runfiles.LockInfo{PID: os.Getpid(), StartedAt: time.Now()}, runfiles.LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()

	removed, kept, err := CleanLoopWorktrees(ctx, repo, ".worktrees", nil, true, time.Now())
	require.NoError(t, err)
	require.Len(t, removed, 1)
	assert.Equal(t, "idle", removed[0].Name)
	require.Len(t, kept, 1)
	assert.Equal(t, "held", kept[0].Name)
	assert.Contains(t, kept[0].Why, "its loop is running")
	assert.DirExists(t, held.Dir)
	assert.NoDirExists(t, LoopWorktreeIn(repo, ".worktrees", "idle").Dir)
	_, err = gittest.Output(repo, "rev-parse", "--verify", "refs/heads/ralph-loop/idle")
	assert.Error(t, err, "the branch went with the worktree")

	_, _, err = CleanLoopWorktrees(ctx, repo, ".worktrees", []string{"idle"}, false, time.Now())
	assert.ErrorContains(t, err, `no loop worktree is called "idle"`)
}
