package engine

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// A stop request whose notification never reaches the watcher (lost in an
// overflow of the kernel's queue; here, written through another name of
// the file, which a watch of .ralph/ is not told of) still stops the loop.
func TestStopRequestWithLostNotificationIsSeen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, runfiles.DirName, runfiles.StopFile)
	s, err := watchStop(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := make(chan struct{})
	var once sync.Once
	defer s.OnNow(func() { once.Do(func() { close(now) }) })()
	// The link's creation is the one notification the watch gets: once it
	// has been read (a stop at the boundary), nothing more is queued.
	elsewhere := filepath.Join(t.TempDir(), "stop")
	if err := os.WriteFile(elsewhere, []byte(string(runfiles.StopAtBoundary)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(elsewhere, path); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	waitFor(t, s.Changed(), "the visible request")
	if err := os.WriteFile(elsewhere, []byte(string(runfiles.StopNow)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, now, "the request whose notification was lost")
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s was never seen", what)
	}
}
