package criteria

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckGitClean(t *testing.T) {
	t.Parallel()
	checkIn := func(t *testing.T, dir string) Result {
		t.Helper()
		return Check(t.Context(), dir, Spec{Type: TypeGitClean}, Env{})
	}
	t.Run("clean", func(t *testing.T) {
		dir := newRepo(t)
		commitFile(t, dir, "a.txt", "a", "add a")
		r := checkIn(t, dir)
		assert.True(t, r.Passed, r.Evidence)
		assert.Equal(t, "no uncommitted changes (ralph's own .ralph/ is not counted)", r.Evidence)
	})
	t.Run("ralph's own files do not count", func(t *testing.T) {
		dir := newRepo(t)
		commitFile(t, dir, "a.txt", "a", "add a")
		writeFile(t, dir, ".ralph/state.json", "{}")
		assert.True(t, checkIn(t, dir).Passed)
	})
	t.Run("modified", func(t *testing.T) {
		dir := newRepo(t)
		commitFile(t, dir, "a.txt", "a", "add a")
		writeFile(t, dir, "a.txt", "changed")
		r := checkIn(t, dir)
		assert.False(t, r.Passed)
		assert.Equal(t, "1 uncommitted change (git status --porcelain):\n M a.txt\n"+
			"commit them, or add generated files to .gitignore", r.Evidence)
	})
	t.Run("untracked and staged", func(t *testing.T) {
		dir := newRepo(t)
		commitFile(t, dir, "a.txt", "a", "add a")
		writeFile(t, dir, "new.txt", "new")
		writeFile(t, dir, "staged.txt", "s")
		runGit(t, dir, "add", "staged.txt")
		r := checkIn(t, dir)
		assert.False(t, r.Passed)
		assert.Contains(t, r.Evidence, "A  staged.txt\n?? new.txt\n")
	})
	t.Run("not a repository", func(t *testing.T) {
		r := checkIn(t, t.TempDir())
		assert.False(t, r.Passed)
		assert.Equal(t, notRepoEvidence, r.Evidence)
	})
}

func TestCheckCommitMade(t *testing.T) {
	t.Parallel()
	checkIn := func(t *testing.T, dir, base string) Result {
		t.Helper()
		return Check(t.Context(), dir, Spec{Type: TypeCommitMade}, Env{RunStartCommit: base})
	}
	t.Run("no new commit", func(t *testing.T) {
		dir := newRepo(t)
		start := commitFile(t, dir, "a.txt", "a", "before the run")
		writeFile(t, dir, "a.txt", "uncommitted")
		r := checkIn(t, dir, start)
		assert.False(t, r.Passed)
		assert.Equal(t, "no commit since the run started at "+start[:12]+"; commit the work with git commit", r.Evidence)
	})
	t.Run("new commits", func(t *testing.T) {
		dir := newRepo(t)
		start := commitFile(t, dir, "a.txt", "a", "before the run")
		c1 := commitFile(t, dir, "b.txt", "b", "add b")
		c2 := commitFile(t, dir, "c.txt", "c", "add c")
		r := checkIn(t, dir, start)
		assert.True(t, r.Passed, r.Evidence)
		assert.Equal(t, "2 commits since the run started at "+start[:12]+":\n"+
			c1[:12]+" add b\n"+c2[:12]+" add c", r.Evidence)
	})
	t.Run("no start commit, commits now", func(t *testing.T) {
		dir := newRepo(t)
		c1 := commitFile(t, dir, "a.txt", "a", "first ever")
		r := checkIn(t, dir, "")
		assert.True(t, r.Passed, r.Evidence)
		assert.Equal(t, "1 commit since the run started (the repository had no commit then):\n"+c1[:12]+" first ever", r.Evidence)
	})
	t.Run("no start commit, none now", func(t *testing.T) {
		r := checkIn(t, newRepo(t), "")
		assert.False(t, r.Passed)
		assert.Contains(t, r.Evidence, "no commit since the run started (the repository had no commit then)")
	})
	t.Run("many commits are summarised", func(t *testing.T) {
		dir := newRepo(t)
		start := commitFile(t, dir, "f.txt", "0", "start")
		for i := range evidenceListMax + 3 {
			commitFile(t, dir, "f.txt", string(rune('a'+i)), "step")
		}
		r := checkIn(t, dir, start)
		assert.True(t, r.Passed)
		assert.Contains(t, r.Evidence, "23 commits since the run started at "+start[:12]+":\n… 3 earlier\n")
	})
	t.Run("unknown start commit", func(t *testing.T) {
		dir := newRepo(t)
		commitFile(t, dir, "a.txt", "a", "x")
		r := checkIn(t, dir, "0123456789abcdef0123456789abcdef01234567")
		assert.False(t, r.Passed)
		assert.Contains(t, r.Evidence, "count the commits since the run started at 0123456789ab: git rev-list: exit status 128")
	})
	t.Run("not a repository", func(t *testing.T) {
		r := checkIn(t, t.TempDir(), "")
		assert.False(t, r.Passed)
		assert.Equal(t, notRepoEvidence, r.Evidence)
	})
}
