package filewatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// within is how long a signal may take before a test gives up: far beyond
// what a busy machine needs, so only a signal that never comes fails.
const within = 30 * time.Second

func waitSignal(t *testing.T, w *Watch) {
	t.Helper()
	select {
	case <-w.C():
	case <-time.After(within):
		t.Fatal("no signal")
	}
}

func newWatch(t *testing.T, opt Options) *Watch {
	t.Helper()
	w, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func TestWriteToMatchedFileSignals(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "stop")
	w := newWatch(t, Options{Dirs: []string{dir}, Match: Only(target), Writes: true})
	if err := os.WriteFile(target, []byte("now\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, w)
}

// Only a matched file's creation or write counts when Writes is set;
// without a Match, any change does.
func TestWhatCounts(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "stop")
	writes := &Watch{opt: Options{Match: Only(target), Writes: true}}
	all := &Watch{}
	for _, c := range []struct {
		w    *Watch
		ev   fsnotify.Event
		want bool
	}{
		{writes, fsnotify.Event{Name: target, Op: fsnotify.Write}, true},
		{writes, fsnotify.Event{Name: target, Op: fsnotify.Create}, true},
		{writes, fsnotify.Event{Name: dir + "/./stop", Op: fsnotify.Write}, true},
		{writes, fsnotify.Event{Name: target, Op: fsnotify.Remove}, false},
		{writes, fsnotify.Event{Name: filepath.Join(dir, "other"), Op: fsnotify.Write}, false},
		{all, fsnotify.Event{Name: filepath.Join(dir, "other"), Op: fsnotify.Remove}, true},
		{all, fsnotify.Event{Name: filepath.Join(dir, "other"), Op: fsnotify.Chmod}, true},
	} {
		if got := c.w.counts(c.ev); got != c.want {
			t.Errorf("%v with %+v counts %v, want %v", c.ev, c.w.opt, got, c.want)
		}
	}
}

// A burst of changes leaves one signal pending, and never blocks the
// watch: the caller reads once for all of them.
func TestBurstCoalesces(t *testing.T) {
	w := newWatch(t, Options{Dirs: []string{t.TempDir()}})
	for range 3 {
		w.signal()
	}
	if len(w.c) != 1 {
		t.Fatalf("%d signals pending, want 1", len(w.c))
	}
}

// An overflow of the kernel's queue, which loses notifications, is said as
// a change: a caller that waits for the notification of a write that was
// lost reads again instead of waiting for ever.
func TestOverflowSignals(t *testing.T) {
	dir := t.TempDir()
	w := newWatch(t, Options{Dirs: []string{dir}, Match: Only(filepath.Join(dir, "stop")), Writes: true})
	w.fsw.Errors <- fsnotify.ErrEventOverflow
	waitSignal(t, w)
}

func TestPollSignalsWithoutChange(t *testing.T) {
	w := newWatch(t, Options{Dirs: []string{t.TempDir()}, Poll: time.Millisecond})
	waitSignal(t, w)
}

func TestMissingDirIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := New(Options{Dirs: []string{missing}}); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
