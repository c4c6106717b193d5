package treewatch

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/internal/filewatch"
)

// Shared is one kernel watcher that many subscribers share, each told when
// something changed in the directories it watches. A server that follows
// files for many clients holds one inotify instance however many clients
// it has: the kernel gives a user few (fs.inotify.max_user_instances,
// often 128) for all their programs, and every ralph loop needs some.
//
// What a subscriber is told is a hint to look again, never what changed:
// it coalesces, and a watcher the kernel refused tells nothing, so a
// subscriber still looks now and then on its own. The kernel watcher
// exists only while someone subscribes. The zero Shared is ready to use.
type Shared struct {
	mu  sync.Mutex
	fsw *fsnotify.Watcher
	// dirs are the watched directories and who watches each.
	dirs map[string]map[*Sub]bool
	subs map[*Sub]bool
}

// Sub is one subscriber of a Shared watcher.
type Sub struct {
	shared *Shared
	// file, when not "", is the one file whose writes and creation count;
	// otherwise any change in the directories does.
	file string
	dirs map[string]bool
	c    chan struct{}
}

// Subscribe starts a subscription that watches no directory yet (see
// Sub.Add). With file "", any change in its directories counts; with a
// file, only that file being created or written to.
func (s *Shared) Subscribe(file string) *Sub {
	sub := &Sub{shared: s, dirs: map[string]bool{}, c: make(chan struct{}, 1)}
	if file != "" {
		sub.file = filepath.Join(canonical(filepath.Dir(file)), filepath.Base(file))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs, s.dirs = map[*Sub]bool{}, map[string]map[*Sub]bool{}
	}
	s.subs[sub] = true
	return sub
}

// C receives when something the subscription watches changed since the
// last receive, or when the kernel lost notifications.
func (sub *Sub) C() <-chan struct{} { return sub.c }

// Add watches dir too. It may be called again for a directory already
// watched, to watch it anew after it was removed and made again. An error
// (the directory does not exist, the kernel has no watcher to give) leaves
// the subscription as it was.
func (sub *Sub) Add(dir string) error {
	dir = canonical(dir)
	s := sub.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.subs[sub] {
		return fsnotify.ErrClosed
	}
	if s.fsw == nil {
		fsw, err := filewatch.Kernel()
		if err != nil {
			return err
		}
		s.fsw = fsw
		go s.listen(fsw)
	}
	if err := s.fsw.Add(dir); err != nil {
		return err
	}
	if s.dirs[dir] == nil {
		s.dirs[dir] = map[*Sub]bool{}
	}
	s.dirs[dir][sub] = true
	sub.dirs[dir] = true
	return nil
}

// Close ends the subscription; a directory no one else watches is no
// longer watched, and the kernel watcher goes with the last subscription.
func (sub *Sub) Close() {
	s := sub.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.subs[sub] {
		return
	}
	delete(s.subs, sub)
	for dir := range sub.dirs {
		delete(s.dirs[dir], sub)
		if len(s.dirs[dir]) == 0 {
			delete(s.dirs, dir)
			if s.fsw != nil {
				_ = s.fsw.Remove(dir) // gone with the directory already
			}
		}
	}
	if len(s.subs) == 0 && s.fsw != nil {
		_ = s.fsw.Close()
		s.fsw = nil
	}
}

// canonical is the name a directory is watched by: absolute, its links
// resolved. The kernel has one watch for every name of a directory and
// names its notifications after the last name it was given, so two
// subscribers must give it the same one.
func canonical(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Clean(dir)
}

// listen hands fsw's notifications to the subscribers they concern until
// fsw is closed.
func (s *Shared) listen(fsw *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			s.dispatch(ev)
		case _, ok := <-fsw.Errors:
			if !ok {
				return
			}
			// A queue overflow loses notifications: everyone looks again.
			s.mu.Lock()
			for sub := range s.subs {
				sub.signal()
			}
			s.mu.Unlock()
		}
	}
}

func (s *Shared) dispatch(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	// A change in a watched directory, or to the directory itself.
	for _, dir := range []string{filepath.Dir(name), name} {
		for sub := range s.dirs[dir] {
			if sub.file == "" || (sub.file == name && ev.Has(fsnotify.Write|fsnotify.Create)) {
				sub.signal()
			}
		}
	}
}

func (sub *Sub) signal() {
	select {
	case sub.c <- struct{}{}:
	default: // one is pending already: the subscriber looks once for both
	}
}
