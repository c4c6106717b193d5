package sandbox

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// resolved is p with its links resolved, as rules hold it (t.TempDir may be
// under a linked /tmp).
func resolved(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

func TestRulesOfALinkedWorktreeGrantOnlyWhatItsCommitsWrite(t *testing.T) {
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README.md", "hi\n", "start")
	ws := filepath.Join(t.TempDir(), "slot")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "ralph/task-1", ws)

	r, err := buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", true)
	require.NoError(t, err)
	git := resolved(t, filepath.Join(main, ".git"))
	assert.ElementsMatch(t, []string{
		resolved(t, ws),
		filepath.Join(git, "worktrees", "slot"),
		filepath.Join(git, "objects"),
		filepath.Join(git, "refs", "heads", "ralph"),
		filepath.Join(git, "logs", "refs", "heads", "ralph"),
	}, r.WriteDirs)
	for _, p := range []string{"config", "hooks", "refs/heads/main", "HEAD", "packed-refs"} {
		assert.False(t, r.writable(filepath.Join(git, p)), "%s is writable", p)
	}
}

func TestRulesMakeTheBranchsRefDirectoriesWhenMissing(t *testing.T) {
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README.md", "hi\n", "start")
	ws := filepath.Join(t.TempDir(), "slot")
	// A branch no ref directory holds yet: git makes refs/heads/feature/deep
	// on its first commit, which the agent could not do.
	gittest.Run(t, main, "worktree", "add", "-q", "--detach", ws)
	gittest.Run(t, ws, "symbolic-ref", "HEAD", "refs/heads/feature/deep/x")
	git := resolved(t, filepath.Join(main, ".git"))

	_, err := buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", false)
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(git, "refs", "heads", "feature"), "rules built without makeDirs made a directory")

	r, err := buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", true)
	require.NoError(t, err)
	assert.Contains(t, r.WriteDirs, filepath.Join(git, "refs", "heads", "feature", "deep"))
	assert.Contains(t, r.WriteDirs, filepath.Join(git, "logs", "refs", "heads", "feature", "deep"))
}

func TestRulesOfAMainCheckoutOrADetachedWorktree(t *testing.T) {
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README.md", "hi\n", "start")
	r, err := buildRules(Agent{Mode: ModeLandlock, Workspace: main}, "", true)
	require.NoError(t, err)
	assert.Equal(t, []string{resolved(t, main)}, r.WriteDirs, "a main checkout's .git is inside it")
	assert.Equal(t, []string{resolved(t, filepath.Join(main, ".git", "config")), resolved(t, filepath.Join(main, ".git", "hooks"))}, r.ReadOnly,
		"what git runs commands from stays read-only where the mechanism can keep it so")

	ws := filepath.Join(t.TempDir(), "detached")
	gittest.Run(t, main, "worktree", "add", "-q", "--detach", ws)
	r, err = buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", true)
	require.NoError(t, err)
	git := resolved(t, filepath.Join(main, ".git"))
	assert.ElementsMatch(t, []string{resolved(t, ws), filepath.Join(git, "worktrees", "detached"), filepath.Join(git, "objects")}, r.WriteDirs,
		"a detached HEAD moves no ref")
	assert.Empty(t, r.ReadOnly, "a linked worktree's repository is outside it")
}

func TestRulesStateWriteAndDevices(t *testing.T) {
	home, ws, tmp, extra := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	gittest.WriteFile(t, home, ".tool.json", "{}")
	a := Agent{
		Mode: ModeBwrap, Workspace: ws, Home: home,
		State:  []string{filepath.Join(home, ".tool"), filepath.Join(home, ".tool.json"), filepath.Join(home, ".missing.json"), "/nonexistent/state"},
		Write:  []string{extra},
		Policy: Policy{Write: []string{"relative/ignored"}},
	}
	r, err := buildRules(a, tmp, true)
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(home, ".tool"), "a missing state directory under home is made")
	assert.NoFileExists(t, filepath.Join(home, ".missing.json"))
	assert.NoDirExists(t, filepath.Join(home, ".missing.json"), "a state file is never made as a directory")
	assert.ElementsMatch(t, []string{resolved(t, ws), resolved(t, tmp), resolved(t, extra), resolved(t, filepath.Join(home, ".tool"))}, r.WriteDirs)
	assert.Equal(t, []string{resolved(t, filepath.Join(home, ".tool.json"))}, r.WriteFiles)
	assert.Contains(t, r.Devices, "/dev/null")
}

func TestRulesDenyTheDefaultsAndTheUsersButNothingWritable(t *testing.T) {
	home := t.TempDir()
	for _, p := range []string{".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml", ".netrc", "work/secret/a", "work/secret/ws/a", "ws/.env"} {
		gittest.WriteFile(t, home, p, "x")
	}
	h := resolved(t, home)
	a := Agent{
		Mode: ModeLandlock, Workspace: filepath.Join(home, "work", "secret", "ws"), Home: home,
		Write: []string{filepath.Join(home, "ws")},
		Policy: Policy{DenyRead: []string{
			filepath.Join(home, "work", "secret"), // holds the workspace: the rest of it stays hidden
			filepath.Join(home, "ws", ".env"),     // inside a writable path: cannot be taken out of it
			filepath.Join(home, "absent"),
		}},
	}
	r, err := buildRules(a, "", false)
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(h, ".aws"), filepath.Join(h, ".config", "gh"), filepath.Join(h, ".netrc"),
		filepath.Join(h, ".ssh"), filepath.Join(h, "work", "secret"),
	}, r.Deny)
	assert.True(t, r.hidden(filepath.Join(h, "work", "secret", "a")))
	assert.True(t, r.writable(filepath.Join(h, "work", "secret", "ws", "a")))
}

func TestRulesNeedAWorkspace(t *testing.T) {
	_, err := buildRules(Agent{Mode: ModeLandlock}, "", false)
	assert.ErrorContains(t, err, "no workspace")
}

func TestDefaultDenyReadAndString(t *testing.T) {
	deny := DefaultDenyRead("/home/u")
	for _, p := range []string{"/home/u/.ssh", "/home/u/.aws", "/home/u/.gnupg", "/home/u/.config/gh", "/home/u/.netrc"} {
		assert.Contains(t, deny, filepath.FromSlash(p))
	}
	assert.Nil(t, DefaultDenyRead(""))

	assert.Equal(t, "off", Agent{}.String())
	assert.Equal(t, "off", Agent{Mode: ModeOff, Policy: Policy{Network: NetworkDeny}}.String())
	assert.Equal(t, "landlock", Agent{Mode: ModeLandlock}.String())
	assert.Equal(t, "bwrap, network deny", Agent{Mode: ModeBwrap, Policy: Policy{Network: NetworkDeny}}.String())
}

func TestConfineOffLeavesTheCommandAlone(t *testing.T) {
	cleanup, err := Agent{Mode: ModeOff}.Confine(nil)
	require.NoError(t, err)
	cleanup()
}

func TestWithTempReplacesEveryTemporaryDirectoryVariable(t *testing.T) {
	env := withTemp([]string{"PATH=/bin", "TMPDIR=/old", "tmp=/older", "HOME=/h"}, "/new")
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "TMPDIR=/new", "TMP=/new", "TEMP=/new"}, env)
	assert.Contains(t, withTemp(nil, "/new"), "TMPDIR=/new", "a nil Env is the process's own, plus the temporary directory")
}

// An agent writes its worktree's .git file and its git directory's
// commondir file: read as they are, they would have the next iteration's
// sandbox grant whatever directory it named there. Pinned, what ralph made
// is granted whatever they say; unpinned, a layout git would not have made
// is granted nothing of a repository.
func TestRulesOfATamperedLinkedWorktree(t *testing.T) {
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README.md", "hi\n", "start")
	ws := filepath.Join(t.TempDir(), "slot")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "ralph/task-1", ws)
	git := resolved(t, filepath.Join(main, ".git"))
	gitDir := filepath.Join(git, "worktrees", "slot")
	granted := []string{resolved(t, ws), gitDir, filepath.Join(git, "objects"),
		filepath.Join(git, "refs", "heads", "ralph"), filepath.Join(git, "logs", "refs", "heads", "ralph")}
	target := t.TempDir() // what the agent wants granted
	gittest.Run(t, target, "init", "-q", "--bare", ".")
	pinned := Agent{Mode: ModeLandlock, Workspace: ws, GitDir: gitDir, GitCommonDir: git}

	t.Run("the .git file", func(t *testing.T) {
		gittest.WriteFile(t, ws, ".git", "gitdir: "+target+"\n")
		t.Cleanup(func() { gittest.WriteFile(t, ws, ".git", "gitdir: "+gitDir+"\n") })
		r, err := buildRules(pinned, "", false)
		require.NoError(t, err)
		assert.ElementsMatch(t, granted, r.WriteDirs)
		r, err = buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", false)
		require.NoError(t, err)
		assert.Equal(t, []string{resolved(t, ws)}, r.WriteDirs)
	})
	t.Run("the commondir file", func(t *testing.T) {
		gittest.WriteFile(t, gitDir, "commondir", target+"\n")
		t.Cleanup(func() { gittest.WriteFile(t, gitDir, "commondir", "../..\n") })
		r, err := buildRules(pinned, "", false)
		require.NoError(t, err)
		assert.ElementsMatch(t, granted, r.WriteDirs)
		r, err = buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", false)
		require.NoError(t, err)
		assert.Equal(t, []string{resolved(t, ws)}, r.WriteDirs)
		assert.False(t, r.writable(filepath.Join(resolved(t, target), "objects")))
	})
	t.Run("as git left it", func(t *testing.T) {
		r, err := buildRules(Agent{Mode: ModeLandlock, Workspace: ws}, "", false)
		require.NoError(t, err)
		assert.ElementsMatch(t, granted, r.WriteDirs, "an untouched worktree is read from its files as before")
	})
}
