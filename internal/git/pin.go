package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Pin is where a work tree's repository is, as ralph knows it from having
// made the work tree (an autopilot slot, a worker's checkout), rather than
// as the work tree says. git finds the repository of a linked worktree
// through its .git file ("gitdir: …") and that directory's commondir file,
// both of which the agent working there may write: an agent that points
// them at a repository it made, whose config names core.fsmonitor or a
// filter, would have ralph's next git command there run its code outside
// the sandbox. A pinned Repo tells git both directories (GIT_DIR,
// GIT_COMMON_DIR, GIT_WORK_TREE), so git never reads the .git file; and
// since git's refs still follow the commondir file whatever
// GIT_COMMON_DIR says, it refuses to run git (TamperedError) once that
// file names another directory.
type Pin struct {
	// GitDir is the work tree's own git directory: HEAD, the index.
	GitDir string
	// CommonDir is the repository's: config, hooks, refs, objects.
	CommonDir string
}

// IsZero reports whether p pins nothing: git finds the repository from the
// work tree, as it does for a person.
func (p Pin) IsZero() bool { return p.GitDir == "" && p.CommonDir == "" }

// Check says what is wrong with p, which came from ralph's environment
// (PinEnv): both directories absolute and there.
func (p Pin) Check() error {
	for _, d := range []struct{ name, path string }{{PinGitDirEnv, p.GitDir}, {PinCommonDirEnv, p.CommonDir}} {
		if !filepath.IsAbs(d.path) {
			return fmt.Errorf("%s=%q is not an absolute path", d.name, d.path)
		}
		if fi, err := os.Stat(d.path); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s=%s is not a directory", d.name, d.path)
		}
	}
	return nil
}

// The variables through which ralph hands a loop the Pin of the work tree
// it made for it: set only by ralph (the autopilot, a cluster worker) on
// the `ralph loop` it starts, never by a config file.
const (
	PinGitDirEnv    = "RALPH_GIT_DIR"
	PinCommonDirEnv = "RALPH_GIT_COMMON_DIR"
)

// Env is p as the variables a `ralph loop` reads it from; none when p is
// zero.
func (p Pin) Env() []string {
	if p.IsZero() {
		return nil
	}
	return []string{PinGitDirEnv + "=" + p.GitDir, PinCommonDirEnv + "=" + p.CommonDir}
}

// pinEnv is what git is told of a pinned repository: the directories, and
// the work tree, which git would otherwise take for the current directory.
// GIT_COMMON_DIR wins over the git directory's commondir file for
// everything but the refs (git's files backend reads the file itself), so
// a commondir that no longer names the pinned common directory is refused
// rather than followed: the agent rewrote it.
func (g Repo) pinEnv() ([]string, error) {
	if g.Pin.IsZero() {
		return nil, nil
	}
	if err := g.Pin.intact(); err != nil {
		return nil, err
	}
	top, err := filepath.Abs(g.Dir)
	if err != nil {
		top = g.Dir
	}
	return []string{"GIT_DIR=" + g.Pin.GitDir, "GIT_COMMON_DIR=" + g.Pin.CommonDir, "GIT_WORK_TREE=" + top}, nil
}

// pinnedPath is where git keeps name (index, index.lock, HEAD.lock: a
// work tree's own files) in a pinned worktree, with no git process asked;
// ok is false for a Repo that is not pinned, or whose pin was tampered
// with (git is then asked, and refuses).
func (g Repo) pinnedPath(name string) (string, bool) {
	if g.Pin.IsZero() || g.Pin.intact() != nil {
		return "", false
	}
	return filepath.Join(g.Pin.GitDir, name), true
}

// TamperedError is a pinned repository whose git directory's commondir file
// names another common directory than the pinned one.
type TamperedError struct {
	GitDir, Names, Pinned string
}

func (e *TamperedError) Error() string {
	return fmt.Sprintf("%s names %s as its repository (its commondir file), not %s, which ralph made the worktree in: "+
		"it was rewritten, and ralph runs no git there", e.GitDir, e.Names, e.Pinned)
}

// intact checks that the git directory's commondir file, when there is
// one, still names the common directory.
func (p Pin) intact() error {
	b, err := os.ReadFile(filepath.Join(p.GitDir, "commondir"))
	if os.IsNotExist(err) && p.GitDir == p.CommonDir {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the commondir file of %s: %w", p.GitDir, err)
	}
	names := strings.TrimSpace(string(b))
	if !filepath.IsAbs(names) {
		names = filepath.Join(p.GitDir, names)
	}
	if !sameFile(names, p.CommonDir) {
		return &TamperedError{GitDir: p.GitDir, Names: filepath.Clean(names), Pinned: p.CommonDir}
	}
	return nil
}

// WorktreePin is the Pin of the linked worktree at path of g's repository,
// found from the repository's side: the common directory as g (a checkout
// or a bare clone no agent writes) names it, and among its worktrees/
// entries the one git made for path. An entry is git's when it bears
// path's name and names path as its work tree; where a name was taken and
// git numbered it, the one entry that names path. Nothing in path is read,
// so it holds whatever the worktree's agent did to its .git file.
func (g Repo) WorktreePin(ctx context.Context, path string) (Pin, error) {
	common, err := g.CommonDir(ctx)
	if err != nil {
		return Pin{}, err
	}
	return WorktreePinIn(common, path)
}

// CommonDir is the absolute path of the git directory Dir's worktrees
// share: what WorktreePinIn needs, which a caller that pins many
// worktrees asks for once.
func (g Repo) CommonDir(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// WorktreePinIn is WorktreePin of a repository whose common git
// directory is common (CommonDir).
func WorktreePinIn(common, path string) (Pin, error) {
	entries := filepath.Join(common, "worktrees")
	if dir := filepath.Join(entries, filepath.Base(path)); namesWorkTree(dir, path) {
		return Pin{GitDir: dir, CommonDir: common}, nil
	}
	listed, _ := os.ReadDir(entries)
	var found []string
	for _, e := range listed {
		if dir := filepath.Join(entries, e.Name()); e.IsDir() && namesWorkTree(dir, path) {
			found = append(found, dir)
		}
	}
	if len(found) != 1 {
		return Pin{}, fmt.Errorf("find the git directory of the worktree %s: %d of %s's entries name it (git worktree list says which)",
			path, len(found), entries)
	}
	return Pin{GitDir: found[0], CommonDir: common}, nil
}

// namesWorkTree reports whether the worktree entry dir names path's .git
// in its gitdir file, as git writes it when it adds the worktree.
func namesWorkTree(dir, path string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "gitdir"))
	if err != nil {
		return false
	}
	named := filepath.Clean(strings.TrimSpace(string(b)))
	want := filepath.Join(path, ".git")
	return named == filepath.Clean(want) || sameFile(named, want)
}
