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

// A change to another file does not signal: the next signal after it is
// the matched file's own.
func TestOtherFilesDoNotSignal(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "stop")
	w := newWatch(t, Options{Dirs: []string{dir}, Match: Only(target), Writes: true})
	if err := os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The barrier: once the target's signal arrives, the other file's
	// notification, queued before it, has been looked at.
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, w)
	select {
	case <-w.C():
		t.Fatal("a change to another file signalled")
	default:
	}
}

// A burst of changes leaves one signal pending, not one per change.
func TestBurstCoalesces(t *testing.T) {
	dir := t.TempDir()
	w := newWatch(t, Options{Dirs: []string{dir}})
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte{byte(i)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	waitSignal(t, w)
	if len(w.c) > 1 || cap(w.c) != 1 {
		t.Fatalf("%d signals pending", len(w.c))
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
