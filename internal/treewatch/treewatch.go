// Package treewatch tells whether anything in a set of directory trees
// changed since it was last asked, from the kernel's change notifications
// (inotify, through fsnotify). The loop asks it before looking at a
// workspace: when an agent touched nothing, the last look still holds, and
// ralph spares itself a `git status` or a walk of the files.
//
// It errs on the side of "changed". Wherever it cannot be sure — a kernel
// or file system that does not report every change (anything but Linux,
// network and FUSE file systems), more directories than it may watch, the
// kernel's watch limit, a lost notification, a barrier that does not come
// back — it says "changed" from then on, and the caller looks as it would
// without it. A write through a shared memory mapping is the one change the
// kernel does not report on a local file system; it is seen at the next
// look that happens for another reason.
//
// [Shared] is the other side of the same kernel notifications: one watcher
// whose directories many subscribers watch at once (the streams of `ralph
// serve`, each following a log), each told when to look again.
package treewatch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/internal/filewatch"
)

// DefaultMaxDirs bounds the directories one Watch watches: each costs a
// kernel watch (about 1 KiB of kernel memory) and a lstat when it is added.
// A tree with more is looked at every time. Where the kernel allows a user
// fewer than four times as many watches, a quarter of its limit is the
// bound, so that an editor or a second loop beside ralph still gets its own.
const DefaultMaxDirs = 20_000

// barrierTimeout is how long Changed waits for its own barrier to come
// back through the notification queue. It comes back in microseconds; a
// watch that misses it is no longer trusted.
const barrierTimeout = 10 * time.Second

// Options say what to watch.
type Options struct {
	// Roots are the directory trees whose changes count.
	Roots []string
	// Skip are directories, inside the roots, whose changes do not count
	// and which are not watched, with everything below them.
	Skip []string
	// Barrier is a file, in a directory that is not under a root or is
	// skipped, that the watch may create and touch: the notification of a
	// touch, coming back after every notification queued before it, is how
	// Changed knows it has heard of everything that happened so far.
	Barrier string
	// MaxDirs bounds the directories watched; 0 means DefaultMaxDirs.
	MaxDirs int
	// Stale, when set, names the paths whose change makes Skip out of date
	// (a .gitignore, for a caller that skips ignored directories): such a
	// change is a change, and Stale then says a new Watch is needed.
	Stale func(path string) bool
}

// Watch answers Changed. The zero of *Watch (nil) always says "changed".
type Watch struct {
	fsw     *fsnotify.Watcher
	skip    []string
	barrier string
	maxDirs int
	staleOn func(string) bool

	mu      sync.Mutex
	dirs    int
	changed bool
	broken  bool
	stale   bool

	back     chan struct{} // the barrier's notification came back
	closed   chan struct{} // closed when the watch is no longer trusted
	closeOne sync.Once
}

// New watches the trees. It never fails: a tree it cannot watch gives a
// Watch that always says "changed".
func New(opts Options) *Watch {
	w := &Watch{skip: cleanAll(opts.Skip), barrier: filepath.Clean(opts.Barrier), maxDirs: opts.MaxDirs,
		staleOn: opts.Stale, back: make(chan struct{}, 1), closed: make(chan struct{})}
	if w.maxDirs <= 0 {
		w.maxDirs = DefaultMaxDirs
		if budget := watchBudget() / 4; budget > 0 {
			w.maxDirs = min(w.maxDirs, budget)
		}
	}
	if opts.Barrier == "" || !reliable(opts.Roots) {
		w.giveUp()
		return w
	}
	fsw, err := filewatch.Kernel()
	if err != nil {
		w.giveUp()
		return w
	}
	w.fsw = fsw
	if err := w.prepareBarrier(); err != nil {
		w.giveUp()
		return w
	}
	for _, root := range opts.Roots {
		if err := w.addTree(filepath.Clean(root)); err != nil {
			w.giveUp()
			return w
		}
	}
	go w.listen()
	return w
}

// Changed reports whether anything under the roots changed since the last
// call, or since New for the first. It waits until the watch has heard of
// everything that happened before the call.
func (w *Watch) Changed() bool {
	if w == nil || w.isBroken() {
		return true
	}
	select { // a stale signal must not stand for this barrier
	case <-w.back:
	default:
	}
	if err := touch(w.barrier, time.Now()); err != nil {
		w.giveUp()
		return true
	}
	timer := time.NewTimer(barrierTimeout)
	defer timer.Stop()
	select {
	case <-w.back:
	case <-w.closed:
		return true
	case <-timer.C:
		w.giveUp()
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := w.changed || w.broken
	w.changed = false
	return changed
}

// Stale reports whether the watch can no longer be trusted but a new one
// could: notifications were lost (the kernel's queue overflowed), or a
// path the Stale option names changed.
func (w *Watch) Stale() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stale
}

// Close stops watching. Changed says "changed" from then on.
func (w *Watch) Close() error {
	if w == nil {
		return nil
	}
	w.closeOne.Do(func() { close(w.closed) })
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broken = true
	if w.fsw == nil {
		return nil
	}
	err := w.fsw.Close()
	w.fsw = nil
	return err
}

func (w *Watch) isBroken() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// giveUp stops trusting the watch and frees its kernel watches.
func (w *Watch) giveUp() { _ = w.Close() }

func (w *Watch) prepareBarrier() error {
	// The barrier is in .ralph/: a link there is not followed.
	f, err := createBarrier(w.barrier)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return w.fsw.Add(filepath.Dir(w.barrier))
}

// listen handles notifications in the order the kernel queued them, so
// that when the barrier's comes back every earlier one has been handled.
func (w *Watch) listen() {
	w.mu.Lock()
	fsw := w.fsw
	w.mu.Unlock()
	if fsw == nil {
		return
	}
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case _, ok := <-fsw.Errors:
			if !ok {
				return
			}
			// A queue overflow (fsnotify.ErrEventOverflow) loses
			// notifications; any other error leaves the watch unsure.
			w.markStale()
			return
		}
	}
}

func (w *Watch) handle(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if name == w.barrier {
		w.signalBack()
		return
	}
	if w.skipped(name) {
		return
	}
	w.mu.Lock()
	w.changed = true
	w.mu.Unlock()
	if w.staleOn != nil && w.staleOn(name) {
		w.markStale()
		return
	}
	if ev.Has(fsnotify.Create) {
		// A new directory (made here or moved in) is watched before the
		// barrier behind this notification comes back.
		if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
			if err := w.addTree(name); err != nil {
				w.giveUp()
			}
		}
	}
}

// markStale gives the watch up as one a new watch would replace.
func (w *Watch) markStale() {
	w.mu.Lock()
	w.stale = true
	w.mu.Unlock()
	w.giveUp()
}

func (w *Watch) signalBack() {
	select {
	case w.back <- struct{}{}:
	default:
	}
}

// errTooManyDirs ends a watch whose trees hold more than MaxDirs directories.
var errTooManyDirs = errors.New("too many directories to watch")

// addTree watches dir and every directory below it that is not skipped.
// Each directory is watched before it is listed, so a subdirectory made
// in between is either listed or notified.
func (w *Watch) addTree(dir string) error {
	if w.skipped(dir) {
		return nil
	}
	w.mu.Lock()
	fsw := w.fsw
	w.dirs++
	tooMany := w.dirs > w.maxDirs
	w.mu.Unlock()
	switch {
	case fsw == nil:
		return errors.New("watch closed")
	case tooMany:
		return errTooManyDirs
	}
	if err := fsw.Add(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone already; its removal was notified
		}
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if e.IsDir() { // symbolic links are not followed, as git does not
			if err := w.addTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipped reports whether path is a skipped directory or lies below one.
func (w *Watch) skipped(path string) bool {
	for _, s := range w.skip {
		if path == s || strings.HasPrefix(path, s+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func cleanAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Clean(p)
	}
	return out
}
