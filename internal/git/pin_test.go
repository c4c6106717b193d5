package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// armedRepository is the git directory of a repository whose config has
// git run a script that writes marker on the first status
// (core.fsmonitor): what an agent would point a worktree's .git file, or
// commondir, at.
func armedRepository(t *testing.T, marker string) string {
	t.Helper()
	dir := gittest.NewRepo(t)
	script := filepath.Join(t.TempDir(), "fsmonitor.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	gittest.Run(t, dir, "config", "core.fsmonitor", script)
	return filepath.Join(dir, ".git")
}

// slot is a repository with a linked worktree, as the autopilot makes one.
func slot(t *testing.T) (main, wt string) {
	t.Helper()
	main = gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README.md", "hi\n", "start")
	wt = filepath.Join(t.TempDir(), "task-1")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "ralph/task-1", wt)
	return main, wt
}

func TestAPinnedRepoNeverFollowsTheWorktreesFiles(t *testing.T) {
	for _, tamper := range []string{".git", "commondir"} {
		t.Run(tamper, func(t *testing.T) {
			main, wt := slot(t)
			pin, err := Repo{Dir: main}.WorktreePin(t.Context(), wt)
			require.NoError(t, err)
			head := gittest.Run(t, wt, "rev-parse", "HEAD")
			marker := filepath.Join(t.TempDir(), "ran")
			armed := armedRepository(t, marker)
			if tamper == ".git" {
				gittest.WriteFile(t, wt, ".git", "gitdir: "+armed+"\n")
			} else {
				gittest.WriteFile(t, pin.GitDir, "commondir", armed+"\n")
			}

			pinned := Repo{Dir: wt, Pin: pin}
			got, err := pinned.Head(t.Context())
			_, dirtyErr := pinned.Dirty(t.Context())
			_, snapErr := NewPinnedWorkspace(pinned).Snapshot(t.Context())
			if tamper == ".git" {
				require.NoError(t, errors.Join(err, dirtyErr, snapErr))
				assert.Equal(t, head, got, "the pinned repository is the one ralph made")
			} else {
				// git's refs would follow the file: git is not run.
				for _, err := range []error{err, dirtyErr, snapErr} {
					var tampered *TamperedError
					require.ErrorAs(t, err, &tampered)
					assert.Contains(t, err.Error(), "names "+armed+" as its repository (its commondir file)")
				}
			}
			assert.NoFileExists(t, marker, "ralph's git ran the armed repository's fsmonitor")

			// The same git, unpinned, runs it: the test would see a pin
			// that did nothing.
			_, _ = Repo{Dir: wt}.Dirty(t.Context())
			assert.FileExists(t, marker, "an unpinned git follows the tampered file")
		})
	}
}

func TestWorktreePin(t *testing.T) {
	main, wt := slot(t)
	common := filepath.Join(main, ".git")
	pin, err := Repo{Dir: main}.WorktreePin(t.Context(), wt)
	require.NoError(t, err)
	assert.True(t, sameFile(common, pin.CommonDir), pin.CommonDir)
	assert.True(t, sameFile(filepath.Join(common, "worktrees", "task-1"), pin.GitDir), pin.GitDir)
	assert.Equal(t, []string{PinGitDirEnv + "=" + pin.GitDir, PinCommonDirEnv + "=" + pin.CommonDir}, pin.Env())
	require.NoError(t, pin.Check())

	t.Run("a name git had to number", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "task-2")
		gittest.Run(t, main, "worktree", "add", "-q", "-b", "elsewhere", other)
		// Another worktree by the same name, made after it.
		twin := filepath.Join(t.TempDir(), "task-2")
		gittest.Run(t, main, "worktree", "add", "-q", "-b", "ralph/task-2", twin)
		pin, err := Repo{Dir: main}.WorktreePin(t.Context(), twin)
		require.NoError(t, err)
		assert.NotEqual(t, "task-2", filepath.Base(pin.GitDir))
		assert.Equal(t, gittest.Run(t, twin, "rev-parse", "HEAD"), gittest.Run(t, main, "rev-parse", "ralph/task-2"))
		got, err := Repo{Dir: twin, Pin: pin}.CurrentBranch(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "ralph/task-2", got)
	})
	t.Run("no worktree there", func(t *testing.T) {
		_, err := Repo{Dir: main}.WorktreePin(t.Context(), filepath.Join(t.TempDir(), "none"))
		assert.ErrorContains(t, err, "0 of")
	})
	t.Run("a pin from the environment that names nothing", func(t *testing.T) {
		assert.ErrorContains(t, Pin{GitDir: "relative", CommonDir: common}.Check(), PinGitDirEnv+`="relative" is not an absolute path`)
		assert.ErrorContains(t, Pin{GitDir: pin.GitDir, CommonDir: filepath.Join(main, "gone")}.Check(), PinCommonDirEnv+"=")
		assert.True(t, Pin{}.IsZero())
		assert.Nil(t, Pin{}.Env())
	})
}
