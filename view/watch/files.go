package watch

import (
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"
)

// fileWatch tells the program when a file it shows may have changed: it
// watches the directories the workspace's files are in (fsnotify), and
// folds a burst of changes into one message.
type fileWatch struct {
	w       *fsnotify.Watcher
	changed chan struct{}
	mu      sync.Mutex
	watched map[string]bool
	done    chan struct{}
}

func newFileWatch() (*fileWatch, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	f := &fileWatch{w: w, changed: make(chan struct{}, 1), watched: map[string]bool{}, done: make(chan struct{})}
	go f.run()
	return f, nil
}

func (f *fileWatch) run() {
	for {
		select {
		case _, ok := <-f.w.Events:
			if !ok {
				return
			}
		case _, ok := <-f.w.Errors:
			// An overflow loses notifications; the next read of the
			// files sees everything anyway.
			if !ok {
				return
			}
		}
		select {
		case f.changed <- struct{}{}:
		default: // a change is already waiting to be read
		}
	}
}

// add watches the directories not watched yet. One that does not exist
// yet is tried again on the next add (the clock's tick reads the files
// meanwhile).
func (f *fileWatch) add(dirs []string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range dirs {
		if !f.watched[d] && f.w.Add(d) == nil {
			f.watched[d] = true
		}
	}
}

// next waits for the next change.
func (f *fileWatch) next() tea.Cmd {
	if f == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-f.changed:
			return changedMsg{}
		case <-f.done:
			return nil
		}
	}
}

func (f *fileWatch) close() {
	if f == nil {
		return
	}
	close(f.done)
	_ = f.w.Close()
}
