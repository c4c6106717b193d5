// Package filewatch tells a caller when files it reads may have changed,
// from the kernel's change notifications (fsnotify). It is the one place
// ralph makes a kernel watcher for its own files (the stop and control
// requests, a run's log, a pending question's answer); internal/treewatch
// keeps its own, for whole directory trees and for the watcher `ralph
// serve` shares among its streams.
//
// What it says is a hint to read again, never what changed: a burst of
// changes is one signal, and wherever notifications may have been lost (the
// kernel's queue overflowed, the watcher reported an error) it says
// "changed", so a caller that reads on every signal never waits for a
// notification that will not come. Poll adds a timer for what the kernel
// does not report at all.
package filewatch

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/internal/hint"
)

// Options say what to watch.
type Options struct {
	// Dirs are the directories watched. A file is watched through its
	// directory, so that the watch works before the file exists and
	// survives its replacement (an editor's, an atomic write's rename).
	Dirs []string
	// Match, when set, says which changed paths count; a path is its
	// directory, as given, joined with the file's name, and cleaned.
	// Without Match any change in the directories counts.
	Match func(path string) bool
	// Writes counts only a file being created or written to; otherwise a
	// removal, a rename and a change of mode count too.
	Writes bool
	// Poll, when not 0, signals every Poll as well, for changes the kernel
	// does not report (a network file system, a write through another
	// name of the file).
	Poll time.Duration
}

// Watch signals on C when something it watches may have changed.
type Watch struct {
	fsw  *fsnotify.Watcher
	opt  Options
	c    chan struct{}
	done chan struct{}
}

// Kernel is the one place ralph asks the kernel for a watcher: every watch
// of ralph's, of files here or of trees in internal/treewatch, starts
// here, so running out of them is said once, with what to raise.
func Kernel() (*fsnotify.Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if errors.Is(err, syscall.EMFILE) {
		return nil, &hint.Error{Err: fmt.Errorf("no file watcher to be had: %w", err),
			Fix: "close other programs that watch files, or raise the limit (on Linux: sysctl fs.inotify.max_user_instances)"}
	}
	return fsw, err
}

// New starts watching opt.Dirs. Every directory must exist.
func New(opt Options) (*Watch, error) {
	fsw, err := Kernel()
	if err != nil {
		return nil, err
	}
	w := &Watch{fsw: fsw, opt: opt, c: make(chan struct{}, 1), done: make(chan struct{})}
	for _, dir := range opt.Dirs {
		if err := w.Add(dir); err != nil {
			_ = fsw.Close()
			return nil, err
		}
	}
	go w.run()
	return w, nil
}

// Only matches the given paths.
func Only(paths ...string) func(string) bool {
	clean := make(map[string]bool, len(paths))
	for _, p := range paths {
		clean[filepath.Clean(p)] = true
	}
	return func(path string) bool { return clean[path] }
}

// Add watches dir too; an error (the directory does not exist) leaves the
// watch as it was.
func (w *Watch) Add(dir string) error {
	if err := w.fsw.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	return nil
}

// C receives when something watched may have changed since the last
// receive.
func (w *Watch) C() <-chan struct{} { return w.c }

// Close stops watching; C receives nothing more.
func (w *Watch) Close() {
	_ = w.fsw.Close()
	<-w.done
}

func (w *Watch) run() {
	defer close(w.done)
	var tick <-chan time.Time
	if w.opt.Poll > 0 {
		t := time.NewTicker(w.opt.Poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.counts(ev) {
				w.signal()
			}
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			// An overflow of the kernel's queue loses notifications, and so
			// may any other error: the caller reads again rather than wait
			// for one that was lost.
			w.signal()
		case <-tick:
			w.signal()
		}
	}
}

func (w *Watch) counts(ev fsnotify.Event) bool {
	if w.opt.Writes && !ev.Has(fsnotify.Write|fsnotify.Create) {
		return false
	}
	return w.opt.Match == nil || w.opt.Match(filepath.Clean(ev.Name))
}

func (w *Watch) signal() {
	select {
	case w.c <- struct{}{}:
	default: // one is pending already: the caller reads once for both
	}
}
