package treewatch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inotifyInstances counts this process's inotify instances.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// told waits until sub is told to look again.
func told(t *testing.T, sub *Sub, what string) {
	t.Helper()
	select {
	case <-sub.C():
	case <-time.After(time.Minute):
		require.FailNow(t, "no notification", what)
	}
}

func TestSharedIsOneKernelWatcherForEverySubscriber(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(log, nil, 0o644))
	before := inotifyInstances(t)

	var s Shared
	var subs []*Sub
	for range 200 {
		sub := s.Subscribe(log)
		require.NoError(t, sub.Add(dir))
		subs = append(subs, sub)
	}
	all := s.Subscribe("")
	require.NoError(t, all.Add(dir))
	assert.Equal(t, before+1, inotifyInstances(t), "201 subscribers, one inotify instance")

	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, sub := range subs {
		told(t, sub, "a write to the followed file")
	}
	told(t, all, "a change in the directory")

	// Another file's change concerns the directory's subscriber only. A
	// change in a second directory, notified after it, is the barrier:
	// once its subscriber is told, every earlier notification was handed
	// to everyone it concerns.
	mark := t.TempDir()
	barrier := s.Subscribe("")
	require.NoError(t, barrier.Add(mark))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mark, "barrier"), nil, 0o644))
	told(t, barrier, "the barrier")
	told(t, all, "a change of another file in the directory")
	assert.Empty(t, subs[0].C(), "a change of another file is not the followed file's")
	barrier.Close()

	for _, sub := range subs {
		sub.Close()
	}
	all.Close()
	all.Close() // twice is harmless
	assert.Equal(t, before, inotifyInstances(t), "the kernel watcher goes with the last subscriber")
	assert.Error(t, all.Add(dir), "a closed subscription watches nothing")

	// Subscribed again, a watcher is made again.
	again := s.Subscribe(log)
	defer again.Close()
	require.NoError(t, again.Add(dir))
	require.NoError(t, os.WriteFile(log, []byte("{}\n"), 0o644))
	told(t, again, "a write after the watcher was made again")
}

func TestSharedWatchesADirectoryMadeAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	require.NoError(t, os.Mkdir(dir, 0o755))
	var s Shared
	sub := s.Subscribe("")
	defer sub.Close()
	require.NoError(t, sub.Add(dir))
	require.NoError(t, os.Remove(dir))
	told(t, sub, "the directory's removal")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, sub.Add(dir))
	for len(sub.C()) > 0 {
		<-sub.C()
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), nil, 0o644))
	told(t, sub, "a file made in the directory made again")
	assert.Error(t, sub.Add(filepath.Join(dir, "nope")), "a directory that does not exist is not watched")
}

// Two names of one directory are one kernel watch, named after the last:
// each subscriber is told all the same.
func TestSharedSubscribersOfOneDirectoryByTwoNames(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	var s Shared
	byDir := s.Subscribe(filepath.Join(dir, "events.jsonl"))
	defer byDir.Close()
	require.NoError(t, byDir.Add(dir))
	byLink := s.Subscribe(filepath.Join(link, "events.jsonl"))
	defer byLink.Close()
	require.NoError(t, byLink.Add(link))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte("{}\n"), 0o644))
	told(t, byDir, "the directory's own name")
	told(t, byLink, "the link's name")
}
