package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// stopPoll is how often the stop file is read with no notification: a
// request whose notification was lost (the kernel's queue overflowed, the
// file was written through another name) still reaches the loop.
const stopPoll = time.Second

// stopWatcher watches .ralph/stop, so a stop request reaches the loop at
// once.
type stopWatcher struct {
	path  string
	watch *filewatch.Watch

	mu        sync.Mutex
	lastRead  string // the file's content at the last read
	requested runfiles.StopMode
	onNow     func()
	quit      chan struct{}
	done      chan struct{}
	// changed gets a signal when a stop is requested, for a wait that
	// must end at once (the wait for a person's answer).
	changed chan struct{}
}

func watchStop(path string) (*stopWatcher, error) {
	dir := filepath.Dir(path)
	if err := ralphdir.MkdirAll(dir, dir); err != nil {
		return nil, err
	}
	// A stop file from before this process started is stale: it was meant
	// for the loop that has ended.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("clear stale stop request: %w", err)
	}
	w, err := filewatch.New(filewatch.Options{Dirs: []string{dir}, Match: filewatch.Only(path), Writes: true, Poll: stopPoll})
	if err != nil {
		return nil, err
	}
	s := &stopWatcher{path: path, watch: w, quit: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{}, 1)}
	go s.run()
	return s, nil
}

// run reads the stop file whenever it may have changed.
func (s *stopWatcher) run() {
	defer close(s.done)
	for {
		select {
		case <-s.watch.C():
			s.read()
		case <-s.quit:
			return
		}
	}
}

func (s *stopWatcher) read() {
	data, err := runfiles.ReadNoFollow(s.path)
	if err != nil {
		return
	}
	mode := strings.TrimSpace(string(data))
	if mode == "" {
		return // the create event comes before the write
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if mode == s.lastRead {
		return // read again on the timer: this request was acted on
	}
	s.lastRead = mode
	// A request in a form this ralph does not know (written by hand, or by
	// another version) still asks the loop to stop: the gentler way.
	requested, err := runfiles.ParseStopMode(mode)
	if err != nil {
		requested = runfiles.StopAtBoundary
	}
	if s.requested != runfiles.StopNow {
		s.requested = requested
	}
	if requested == runfiles.StopNow && s.onNow != nil {
		s.onNow()
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Changed signals when a stop is requested (once per request at most; a
// reader checks Requested).
func (s *stopWatcher) Changed() <-chan struct{} { return s.changed }

// Requested reports whether a stop was asked for.
func (s *stopWatcher) Requested() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requested != ""
}

// OnNow calls cancel when `ralph stop --now` arrives (or has already
// arrived) while an iteration runs; the returned func unregisters it.
func (s *stopWatcher) OnNow(cancel func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onNow = cancel
	if s.requested == runfiles.StopNow {
		cancel()
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.onNow = nil
	}
}

// Close stops watching and removes the stop file, which has been acted on.
func (s *stopWatcher) Close() {
	s.watch.Close()
	close(s.quit)
	<-s.done
	_ = os.Remove(s.path)
}
