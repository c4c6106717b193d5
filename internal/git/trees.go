package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WorkTree writes the tree of the work tree's files as they are now
// (tracked, and untracked but not ignored; .ralph/ left out) into the
// repository's objects and returns its name; "" outside a repository. It
// stages into index, a file of ralph's, never the user's index: what the
// user or the agent staged stays as it was. index is kept from one call to
// the next so that git hashes only the files that changed since (its stat
// cache); the first call seeds it from the repository's own index for the
// same reason. The objects it writes are unreferenced: git's gc prunes them
// after its grace period (two weeks by default), and a diff asked for after
// that says the tree is gone.
func (g Repo) WorkTree(ctx context.Context, index string) (string, error) {
	if !g.mayBeRepo() {
		return "", nil
	}
	abs, err := filepath.Abs(index)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if err := g.seedIndex(ctx, abs); err != nil {
			if isNotRepo(err) {
				return "", nil
			}
			return "", err
		}
	}
	env := []string{"GIT_INDEX_FILE=" + abs}
	if _, err := g.runEnv(ctx, env, append([]string{"add", "--all", "--ignore-errors"}, scope()...)...); err != nil {
		if isNotRepo(err) {
			return "", nil
		}
		return "", err
	}
	out, err := g.runEnv(ctx, env, "write-tree")
	if err != nil {
		return "", err
	}
	// git makes the index anew by its umask (0644 as a rule); it lists
	// the workspace's files, and is kept private as the rest of ralph's.
	if fi, err := os.Lstat(abs); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
		if err := os.Chmod(abs, 0o600); err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(string(out)), nil
}

// seedIndex copies the repository's index to index, when it has one. A
// repository without one (no file ever staged) leaves index to be made by
// the first add.
func (g Repo) seedIndex(ctx context.Context, index string) error {
	path, ok := g.pinnedPath("index")
	if !ok {
		out, err := g.run(ctx, "rev-parse", "--path-format=absolute", "--git-path", "index")
		if err != nil {
			return err
		}
		path = strings.TrimSpace(string(out))
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the repository's index: %w", err)
	}
	return os.WriteFile(index, data, 0o600)
}

// DiffTrees is the patch, with its stat first, from tree (or commit) a to
// b. No external diff or text conversion the repository configures runs:
// the trees are the agent's work, and the repository's configuration may
// be too.
func (g Repo) DiffTrees(ctx context.Context, a, b string) (string, error) {
	out, err := g.run(ctx, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--patch-with-stat", a, b, "--")
	return string(out), err
}

// DiffFiles is the unified diff from file a to file b, both named
// relative to dir, as they appear in the diff's header; no repository is
// needed. "" when they are the same.
func DiffFiles(ctx context.Context, dir, a, b string) (string, error) {
	out, err := Repo{Dir: dir}.run(ctx, "diff", "--no-index", "--no-ext-diff", "--no-textconv", "--no-color",
		"--src-prefix=", "--dst-prefix=", "--", a, b)
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode == 1 {
		out, err = ge.stdout, nil
	}
	return string(out), err
}
