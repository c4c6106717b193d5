package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// Each way an agent confined to a main checkout could arm its repository
// for ralph's git is a change of its Controls; ordinary work is not.
func TestControlsOfAMainCheckout(t *testing.T) {
	changed := func(t *testing.T, arm func(ws string)) []string {
		t.Helper()
		ws := gittest.NewRepo(t)
		gittest.CommitFile(t, ws, "README.md", "hi\n", "start")
		before := Repo{Dir: ws}.Controls()
		arm(ws)
		var rel []string
		for _, p := range before.Changed(Repo{Dir: ws}.Controls()) {
			r, err := filepath.Rel(ws, p)
			require.NoError(t, err)
			rel = append(rel, r)
		}
		return rel
	}
	t.Run("work and commits change nothing", func(t *testing.T) {
		assert.Empty(t, changed(t, func(ws string) {
			gittest.CommitFile(t, ws, "main.go", "package main\n", "work")
			gittest.WriteFile(t, ws, "notes.txt", "x")
		}))
	})
	t.Run("the config", func(t *testing.T) {
		assert.Equal(t, []string{".git/config"}, changed(t, func(ws string) {
			gittest.Run(t, ws, "config", "core.fsmonitor", "/tmp/run-me")
		}))
	})
	t.Run("a hook added", func(t *testing.T) {
		assert.Equal(t, []string{".git/hooks/post-index-change"}, changed(t, func(ws string) {
			gittest.WriteFile(t, ws, ".git/hooks/post-index-change", "#!/bin/sh\n")
		}))
	})
	t.Run("a hook's mode", func(t *testing.T) {
		assert.Equal(t, []string{".git/hooks/pre-commit.sample"}, changed(t, func(ws string) {
			path := filepath.Join(ws, ".git", "hooks", "pre-commit.sample")
			info, err := os.Stat(path)
			require.NoError(t, err, "git init's sample hooks")
			require.NoError(t, os.Chmod(path, info.Mode()^0o100))
		}))
	})
	t.Run("a commondir added", func(t *testing.T) {
		assert.Equal(t, []string{".git/commondir"}, changed(t, func(ws string) {
			gittest.Run(t, ws, "init", "-q", "armed")
			gittest.WriteFile(t, ws, ".git/commondir", filepath.Join(ws, "armed", ".git")+"\n")
		}), "not the armed repository's files")
	})
	t.Run("the config of a worktree", func(t *testing.T) {
		assert.Equal(t, []string{".git/config.worktree"}, changed(t, func(ws string) {
			gittest.WriteFile(t, ws, ".git/config.worktree", "[core]\n\tfsmonitor = /tmp/run-me\n")
		}))
	})
	t.Run(".git put aside for another", func(t *testing.T) {
		got := changed(t, func(ws string) {
			require.NoError(t, os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, ".git-aside")))
			require.NoError(t, os.CopyFS(filepath.Join(ws, ".git"), os.DirFS(filepath.Join(ws, ".git-aside"))))
		})
		assert.Equal(t, []string{".git"}, got, "the same files, in another directory")
	})
	t.Run(".git made a file", func(t *testing.T) {
		assert.Equal(t, []string{".git"}, changed(t, func(ws string) {
			require.NoError(t, os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "armed")))
			gittest.WriteFile(t, ws, ".git", "gitdir: armed\n")
		}))
	})
}

func TestControlsOfAWorkspaceWithoutARepository(t *testing.T) {
	ws := t.TempDir()
	before := Repo{Dir: ws}.Controls()
	assert.Empty(t, before.Changed(Repo{Dir: ws}.Controls()))
	gittest.Run(t, ws, "init", "-q", ".")
	assert.Equal(t, []string{filepath.Join(ws, ".git")}, before.Changed(Repo{Dir: ws}.Controls()), "a repository the agent made")
}

// A pinned worktree's .git file is nothing to its git; its commondir file
// still is (git's refs follow it), and so is config.worktree.
func TestControlsOfAPinnedWorktree(t *testing.T) {
	main, wt := slot(t)
	pin, err := Repo{Dir: main}.WorktreePin(t.Context(), wt)
	require.NoError(t, err)
	repo := Repo{Dir: wt, Pin: pin}
	before := repo.Controls()
	gittest.WriteFile(t, wt, ".git", "gitdir: /elsewhere\n")
	gittest.CommitFile(t, main, "more.txt", "x", "more")
	assert.Empty(t, before.Changed(repo.Controls()))
	gittest.WriteFile(t, pin.GitDir, "commondir", "/elsewhere\n")
	gittest.WriteFile(t, pin.GitDir, "config.worktree", "[core]\n\tfsmonitor = /tmp/run-me\n")
	assert.Equal(t, []string{filepath.Join(pin.GitDir, "commondir"), filepath.Join(pin.GitDir, "config.worktree")}, before.Changed(repo.Controls()))
}

// BenchmarkControls is what the guard costs a confined iteration, twice
// (before and after): reading a main checkout's controls, with the sample
// hooks git init makes.
func BenchmarkControls(b *testing.B) {
	ws := gittest.NewRepo(b)
	repo := Repo{Dir: ws}
	for b.Loop() {
		_ = repo.Controls()
	}
}

// Of a linked worktree, what its agent can write: its .git file and its
// git directory's commondir and config.worktree; not the repository's
// config, which ralph itself writes beside a running loop (and a user may).
func TestControlsOfALinkedWorktree(t *testing.T) {
	main, wt := slot(t)
	repo := Repo{Dir: wt}
	before := repo.Controls()
	gittest.Run(t, main, "config", "branch.ralph-loop/side.ralphbase", "main")
	gittest.WriteFile(t, main, ".git/hooks/post-commit", "#!/bin/sh\n")
	assert.Empty(t, before.Changed(repo.Controls()), "the repository's own config and hooks are out of the agent's reach")
	gitDir := filepath.Join(main, ".git", "worktrees", "task-1")
	gittest.WriteFile(t, gitDir, "commondir", "/elsewhere\n")
	assert.Equal(t, []string{filepath.Join(gitDir, "commondir")}, before.Changed(repo.Controls()))
	gittest.WriteFile(t, wt, ".git", "gitdir: /elsewhere\n")
	assert.Contains(t, before.Changed(repo.Controls()), filepath.Join(wt, ".git"))
}

// A workspace inside a checkout: the checkout's .git is out of its reach,
// but a .git made in the workspace is a repository git would find first.
func TestControlsOfAWorkspaceInsideACheckout(t *testing.T) {
	main := gittest.NewRepo(t)
	ws := filepath.Join(main, "sub")
	gittest.WriteFile(t, ws, "a.txt", "a")
	repo := Repo{Dir: ws}
	before := repo.Controls()
	gittest.Run(t, main, "config", "user.name", "Someone")
	assert.Empty(t, before.Changed(repo.Controls()))
	gittest.WriteFile(t, ws, ".git", "gitdir: /elsewhere\n")
	assert.Contains(t, before.Changed(repo.Controls()), filepath.Join(ws, ".git"))
}
