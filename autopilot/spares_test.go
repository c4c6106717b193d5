package autopilot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// messyRunner is a fakeRunner whose loops leave, beside their commit,
// everything a new worktree would not have: an untracked file, an
// ignored one, a loop's .ralph/, a change to a tracked file, a merge
// under way. It notes the files each worktree held as its loop started,
// what git tracks of them, and its git directory; its CleanUp says which
// task's clean-up ended.
type messyRunner struct {
	*fakeRunner
	found, tracked map[string][]string
	gitDir, readme map[string]string
	cleaned        chan string
}

func (r *messyRunner) Start(ctx context.Context, job Job) (Handle, error) {
	var held []string
	err := filepath.WalkDir(job.Dir, func(path string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(job.Dir, path)
		if err == nil && !d.IsDir() && rel != ".git" {
			held = append(held, rel)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(job.Pin.GitDir, "MERGE_HEAD")); err == nil {
		held = append(held, "(a merge under way)")
	}
	r.found[job.Task], r.gitDir[job.Task] = held, job.Pin.GitDir
	out, err := exec.Command("git", "-C", job.Dir, "ls-files").Output()
	if err != nil {
		return nil, err
	}
	r.tracked[job.Task] = strings.Fields(string(out))
	readme, _ := os.ReadFile(filepath.Join(job.Dir, "README.md"))
	r.readme[job.Task] = string(readme)
	h, err := r.fakeRunner.Start(ctx, job)
	if err != nil {
		return nil, err
	}
	for file, text := range map[string]string{"junk.txt": "x", "build/out": "x", ".ralph/loop.log": "x", "README.md": "changed"} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(job.Dir, file)), 0o755)
		if err := os.WriteFile(filepath.Join(job.Dir, file), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(job.Pin.GitDir, "MERGE_HEAD"), []byte(strings.Repeat("0", 40)+"\n"), 0o644); err != nil {
		return nil, err
	}
	return h, nil
}

func (r *messyRunner) CleanUp(_ context.Context, task string, _ bool) error {
	r.cleaned <- task
	return nil
}

// A merged task's worktree is kept for a later task, which finds it as
// clean as a new one: the files the base branch has, nothing of the
// task before. The run removes what it kept as it ends.
func TestAMergedTasksWorktreeServesALaterOneAsIfNew(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2), task("c", 3))
	gittest.CommitFile(t, h.repo, ".gitignore", "/build/\n/.ralph/\n/.worktrees/\n", "ignore")
	runner := &messyRunner{fakeRunner: h.runner, found: map[string][]string{}, tracked: map[string][]string{},
		gitDir: map[string]string{}, readme: map[string]string{}, cleaned: make(chan string, 3)}
	h.start(t.Context(), h.settings(1), runner)
	h.loop().complete()
	b := h.loop()
	require.Equal(t, "a", recv(t, runner.cleaned, "a's clean-up"))
	b.complete()
	c := h.loop()
	assert.Equal(t, "c", c.job.Task)
	c.complete()
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 3}, res)
	assert.Equal(t, runner.gitDir["a"], runner.gitDir["c"], "c's worktree is a's, kept")
	assert.Equal(t, c.job.Dir, filepath.Join(h.repo, ".worktrees", "c"), "where a task's worktree is")
	for _, id := range []string{"a", "b", "c"} {
		assert.Equal(t, runner.tracked[id], runner.found[id], "%s's worktree holds what git tracks and nothing else", id)
		assert.Contains(t, runner.found[id], "README.md")
		assert.Equal(t, 1, h.source.closed[id], "closed once")
		assert.FileExists(t, filepath.Join(h.repo, id+".txt"), "merged")
	}
	assert.Contains(t, runner.found["c"], "a.txt", "c starts from the base branch, a merged")
	assert.Equal(t, "hello\n", runner.readme["c"], "the change a's loop left is not c's")
	list := gittest.Run(t, h.repo, "worktree", "list", "--porcelain")
	assert.Equal(t, 1, strings.Count(list, "worktree "), "every worktree removed at the end:\n%s", list)
	assert.NoDirExists(t, filepath.Join(h.repo, ".worktrees", ".spare"))
}

// A kill between a spare's move to a task's worktree and its branch's
// checkout leaves the worktree detached and the task without a branch:
// the task's launch checks its branch out, so its work is merged.
func TestASpareMovedButNotOnItsBranchGetsIt(t *testing.T) {
	h := newHarness(t, task("a", 1))
	gittest.Run(t, h.repo, "worktree", "add", "-q", "--detach", filepath.Join(h.repo, ".worktrees", "a"), "HEAD")
	h.start(t.Context(), h.settings(1))
	h.loop().complete()
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 1}, res)
	assert.FileExists(t, filepath.Join(h.repo, "a.txt"), "a's work merged")
}
