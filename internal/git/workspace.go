package git

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/ralph-loop/ralph/internal/treewatch"
)

// WatchBarrier is the file in .ralph/ that a workspace touches to know it
// has heard of every change made so far (see treewatch.Options.Barrier).
const WatchBarrier = "watch.barrier"

// Workspace is what the loop asks of a workspace's files: git's view of
// them in a repository, and the files themselves where git has nothing to
// say (no repository, or no git on the machine), since without a
// fingerprint there no iteration would ever count as progress. It
// remembers the content hashes it computed, so a snapshot reads only the
// files that changed since the last one, and, once .ralph/ exists, watches
// the files, so that a snapshot of a workspace nothing touched costs no
// look at all. Copies share that memory; Close ends the watch.
type Workspace struct {
	git   Repo
	files *Tree
	seen  *lastLook
}

// lastLook is the last snapshot and the watch that says whether it still
// holds.
type lastLook struct {
	start sync.Once
	watch *treewatch.Watch

	mu   sync.Mutex
	last *Snapshot
}

// NewWorkspace returns the workspace rooted at dir.
func NewWorkspace(dir string) Workspace {
	return NewPinnedWorkspace(Repo{Dir: dir})
}

// NewPinnedWorkspace returns the workspace of repo, whose Pin (when set)
// says where its repository is: see Pin.
func NewPinnedWorkspace(repo Repo) Workspace {
	return Workspace{git: repo, files: &Tree{Dir: repo.Dir}, seen: &lastLook{}}
}

// Snapshot is HEAD and a fingerprint of the files: the last snapshot when
// the watch says nothing changed since, else a new look.
func (w Workspace) Snapshot(ctx context.Context) (Snapshot, error) {
	w.seen.mu.Lock()
	defer w.seen.mu.Unlock()
	w.seen.start.Do(func() { w.seen.watch = w.newWatch(ctx) })
	// Asked before looking, so that a change made during the look is a
	// change at the next snapshot.
	changed := w.seen.watch.Changed()
	if w.seen.watch.Stale() {
		w.seen.watch = w.newWatch(ctx)
		changed = true
	}
	if !changed && w.seen.last != nil {
		return *w.seen.last, nil
	}
	s, err := w.look(ctx)
	w.seen.last = nil
	if err == nil {
		w.seen.last = &s
	}
	return s, err
}

// Close stops watching the files; later snapshots each look.
func (w Workspace) Close() error {
	w.seen.mu.Lock()
	defer w.seen.mu.Unlock()
	w.seen.start.Do(func() {})
	return w.seen.watch.Close()
}

// newWatch watches the work tree and the repository's git directories,
// wherever they are. Left out: .ralph/, the objects (they change only with
// what refs and the index show) and directories git ignores whole (a
// node_modules would otherwise cost thousands of kernel watches). A
// .gitignore or info/exclude that changes makes the watch stale, and the
// next snapshot makes a new one. Until .ralph/ exists, which holds the
// barrier, there is no watch.
func (w Workspace) newWatch(ctx context.Context) *treewatch.Watch {
	dir, err := filepath.Abs(w.git.Dir)
	if err != nil {
		return nil
	}
	opts := treewatch.Options{Roots: []string{dir}, Skip: []string{filepath.Join(dir, StateDir)},
		Barrier: filepath.Join(dir, StateDir, WatchBarrier)}
	gitDir, commonDir, ok := w.git.Pin.GitDir, w.git.Pin.CommonDir, !w.git.Pin.IsZero()
	if !ok {
		gitDir, commonDir, ok = findGitDirs(dir)
	}
	if ok {
		for _, d := range []string{gitDir, commonDir} {
			if !within(d, dir) {
				opts.Roots = append(opts.Roots, d)
			}
		}
		opts.Skip = append(opts.Skip, filepath.Join(commonDir, "objects"))
		opts.Skip = append(opts.Skip, w.git.ignoredDirs(ctx)...)
		infos := []string{filepath.Join(gitDir, "info"), filepath.Join(commonDir, "info")}
		opts.Stale = func(path string) bool {
			return filepath.Base(path) == ".gitignore" || within(path, infos[0]) || within(path, infos[1])
		}
	}
	return treewatch.New(opts)
}

// look is HEAD and a fingerprint of the files, from one `git status`
// in a repository and a walk of the files outside one. The choice is made
// on every look: an agent that runs `git init` changes which applies, and
// that is a change too.
func (w Workspace) look(ctx context.Context) (Snapshot, error) {
	s, err := w.git.snapshot(ctx, w.files)
	switch {
	case err == nil && s.Fingerprint != "":
		return s, nil
	case err != nil && !errors.Is(err, exec.ErrNotFound):
		return Snapshot{}, err
	}
	fp, err := w.files.Fingerprint(ctx)
	return Snapshot{Fingerprint: fp}, err
}

// CommitsBetween lists the commits reachable from head and not from base,
// oldest first (Repo.CommitsBetween).
func (w Workspace) CommitsBetween(ctx context.Context, base, head string) ([]Commit, error) {
	return w.git.CommitsBetween(ctx, base, head)
}

// WorkTree writes the tree of the workspace's files as they are now
// (Repo.WorkTree).
func (w Workspace) WorkTree(ctx context.Context, index string) (string, error) {
	return w.git.WorkTree(ctx, index)
}
