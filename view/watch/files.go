package watch

import (
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/ralph-loop/ralph/internal/filewatch"
)

// fileWatch tells the program when a file it shows may have changed: it
// watches the directories the workspace's files are in (internal/filewatch,
// which folds a burst of changes into one message).
type fileWatch struct {
	w       *filewatch.Watch
	mu      sync.Mutex
	watched map[string]bool
	done    chan struct{}
}

func newFileWatch() (*fileWatch, error) {
	w, err := filewatch.New(filewatch.Options{})
	if err != nil {
		return nil, err
	}
	return &fileWatch{w: w, watched: map[string]bool{}, done: make(chan struct{})}, nil
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
		case <-f.w.C():
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
	f.w.Close()
}
