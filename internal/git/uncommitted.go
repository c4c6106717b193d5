package git

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Uncommitted is what a checkout has that its HEAD has not: each path git
// status lists (untracked files included, ignored files and .ralph/ left
// out), with its status and the file's size, mode and modification time
// (and, looked at with UncommittedContent, its content's hash), so that a
// later look can tell which of them changed in between.
type Uncommitted map[string]PathState

// PathState is one uncommitted path: its two-letter status as git status
// --porcelain shows it ("??" untracked, " M" modified, "D " deleted and
// staged, …) and its file as it was.
type PathState struct {
	Status string
	exists bool
	size   int64
	mode   fs.FileMode
	mtime  time.Time
	// sum is the content's hash of a regular file of at most hashLimit
	// bytes, with UncommittedContent: a rewrite of the same size within
	// the file system's clock tick leaves the rest as it was.
	sum [sha256.Size]byte
}

// hashLimit is the largest file whose content UncommittedContent hashes: a
// tracker's files are small, and a large untracked file of the user's is
// not read on every look.
const hashLimit = 1 << 20

func (s PathState) same(o PathState) bool {
	return s.Status == o.Status && s.exists == o.exists && s.size == o.size && s.mode == o.mode &&
		s.mtime.Equal(o.mtime) && s.sum == o.sum
}

// pathState is the state of the file at path, with status; hashed, with
// its content's hash.
func pathState(path, status string, hashed bool) PathState {
	st := PathState{Status: status}
	fi, err := os.Lstat(path)
	if err != nil {
		return st
	}
	st.exists, st.size, st.mode, st.mtime = true, fi.Size(), fi.Mode(), fi.ModTime()
	if hashed && fi.Mode().IsRegular() && fi.Size() <= hashLimit {
		if data, err := os.ReadFile(path); err == nil {
			st.sum = sha256.Sum256(data)
		}
	}
	return st
}

// Untracked reports whether git does not know the path at all.
func (s PathState) Untracked() bool { return s.Status == "??" }

// Uncommitted looks at what the checkout at Dir, which must be its work
// tree's root, has uncommitted.
func (g Repo) Uncommitted(ctx context.Context) (Uncommitted, error) { return g.uncommitted(ctx, false) }

// UncommittedContent is Uncommitted with the content of each small file
// hashed too, for telling apart two looks a moment apart; it reads every
// uncommitted file of up to a MiB.
func (g Repo) UncommittedContent(ctx context.Context) (Uncommitted, error) {
	return g.uncommitted(ctx, true)
}

func (g Repo) uncommitted(ctx context.Context, hashed bool) (Uncommitted, error) {
	out, err := g.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", ":(exclude)"+StateDir)
	if err != nil {
		return nil, err
	}
	u := Uncommitted{}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		u[f[3:]] = pathState(filepath.Join(g.Dir, filepath.FromSlash(f[3:])), f[:2], hashed)
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the source of a rename or copy
		}
	}
	return u, nil
}

// ChangedSince lists, sorted, the paths whose state differs from before:
// listed in only one of the two, or with another status, size, mode or
// modification time.
func (u Uncommitted) ChangedSince(before Uncommitted) []string {
	var changed []string
	for p, now := range u {
		if was, ok := before[p]; !ok || !was.same(now) {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := u[p]; !ok {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	return changed
}

// OverwriteError is a fast-forward git refused because it would overwrite
// uncommitted files of the checkout: untracked ones where the new commit
// has files, or local changes to files it changes.
type OverwriteError struct {
	// Commit is where HEAD was to move.
	Commit string
	// Untracked and Modified are the checkout's paths in the way.
	Untracked, Modified []string
	// Err is git's refusal.
	Err error
}

func (e *OverwriteError) Error() string {
	var parts []string
	if len(e.Untracked) > 0 {
		parts = append(parts, "untracked "+strings.Join(e.Untracked, ", "))
	}
	if len(e.Modified) > 0 {
		parts = append(parts, "the uncommitted changes to "+strings.Join(e.Modified, ", "))
	}
	return "git merge --ff-only would overwrite " + strings.Join(parts, " and ")
}

func (e *OverwriteError) Unwrap() error { return e.Err }

// Files are the paths in the way, untracked first.
func (e *OverwriteError) Files() []string { return append(slices.Clone(e.Untracked), e.Modified...) }

// inTheWay explains a refused fast-forward of HEAD to commit: the
// uncommitted paths that commit's changes would overwrite (a path it
// changes, or a directory or file where it puts the other). nil when none
// is, or HEAD cannot be fast-forwarded to commit at all.
func (g Repo) inTheWay(ctx context.Context, commit string, refusal error) *OverwriteError {
	if ok, err := g.IsAncestor(ctx, "HEAD", commit); err != nil || !ok {
		return nil
	}
	out, err := g.run(ctx, "diff", "--name-only", "--no-renames", "-z", "HEAD", commit)
	if err != nil {
		return nil
	}
	incoming := map[string]bool{}
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			incoming[p] = true
		}
	}
	pending, err := g.Uncommitted(ctx)
	if err != nil {
		return nil
	}
	e := &OverwriteError{Commit: commit, Err: refusal}
	for _, p := range slices.Sorted(maps.Keys(pending)) {
		if !overwrites(incoming, p) {
			continue
		}
		if pending[p].Untracked() {
			e.Untracked = append(e.Untracked, p)
		} else {
			e.Modified = append(e.Modified, p)
		}
	}
	if len(e.Untracked)+len(e.Modified) == 0 {
		return nil
	}
	return e
}

// overwrites reports whether changes to the incoming paths touch name: the
// path itself, a file where one of its directories is, or files under it
// where it is a file. All are git's paths, with / on every system.
func overwrites(incoming map[string]bool, name string) bool {
	if incoming[name] {
		return true
	}
	for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if incoming[dir] {
			return true
		}
	}
	for p := range incoming {
		if strings.HasPrefix(p, name+"/") {
			return true
		}
	}
	return false
}
