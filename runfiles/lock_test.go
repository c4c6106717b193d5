package runfiles

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary play a process that holds the workspace
// lock: a ralph, or a process that inherited a dead ralph's descriptor.
func TestMain(m *testing.M) {
	if path := os.Getenv("ENGINE_TEST_HOLD_LOCK"); path != "" {
		holdLock(path)
		return
	}
	os.Exit(m.Run())
}

func holdLock(path string) {
	fl := flock.New(path)
	if err := fl.Lock(); err != nil {
		os.Exit(2)
	}
	defer func() { _ = fl.Unlock() }() // and keeps fl, whose file a finalizer would close
	if _, err := os.Stdout.WriteString("locked\n"); err != nil {
		os.Exit(3)
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until told
}

// lockHolder starts a process that holds the lock at path until release
// is called; it returns once the lock is held.
func lockHolder(t *testing.T, path string) (pid int, release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "ENGINE_TEST_HOLD_LOCK="+path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	released := false
	release = func() {
		if !released {
			released = true
			_ = stdin.Close()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(release)
	return cmd.Process.Pid, release
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func recordHolder(t *testing.T, path string, pid int) {
	t.Helper()
	require.NoError(t, writeLockInfo(path, LockInfo{RunID: "r1", PID: pid, Host: "h", StartedAt: time.Now()}))
}

// A ralph killed while a child it forked had not yet exec'd leaves its
// lock held by that child for a moment. The next ralph waits for it and
// says so, rather than report the dead ralph as running.
func TestLockWaitsWhenItsRecordedHolderIsDead(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	dead := deadPID(t)
	recordHolder(t, path, dead)
	holder, release := lockHolder(t, path)

	notes := make(chan string, 4)
	got := make(chan error, 1)
	var lock *Lock
	go func() {
		var err error
		lock, err = AcquireLock(t.Context(), path, LockInfo{PID: os.Getpid()},
			LockOptions{OrphanWait: time.Hour, Notify: func(s string) { notes <- s }})
		got <- err
	}()
	note := firstNote(t, notes, got)
	assert.Contains(t, note, "pid "+strconv.Itoa(dead)+", which is no longer running")
	assert.Contains(t, note, "pid "+strconv.Itoa(holder)+" (")
	assert.Contains(t, note, "waiting up to 1h0m0s")
	release()
	require.NoError(t, <-got)
	assert.Equal(t, dead, lock.Previous.PID, "the dead holder is reported as taken over")
	require.NoError(t, lock.Release())
}

// firstNote returns what AcquireLock said it waits for, failing if it
// returned without waiting.
func firstNote(t *testing.T, notes <-chan string, got <-chan error) string {
	t.Helper()
	select {
	case note := <-notes:
		return note
	case err := <-got:
		t.Fatalf("AcquireLock returned without waiting: %v", err)
		return ""
	}
}

func TestLockRefusesNamingTheProcessThatReallyHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	dead := deadPID(t)
	recordHolder(t, path, dead)
	holder, _ := lockHolder(t, path)

	_, err := AcquireLock(t.Context(), path, LockInfo{PID: os.Getpid()}, LockOptions{OrphanWait: 50 * time.Millisecond})
	var held *LockHeldError
	require.True(t, errors.As(err, &held), "%v", err)
	assert.True(t, held.HolderGone)
	require.Len(t, held.Holders, 1)
	assert.Equal(t, holder, held.Holders[0].PID)
	assert.Contains(t, err.Error(), "is held by pid "+strconv.Itoa(holder))
	assert.Contains(t, err.Error(), "the ralph it names, pid "+strconv.Itoa(dead)+", is no longer running")
	assert.NotContains(t, err.Error(), "another ralph is running")
	require.NotEmpty(t, held.Holders)
	assert.Equal(t, holder, held.Holders[0].PID, "the process a hint can name")
}

func TestLockHeldByARunningRalphIsRefusedAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	holder, _ := lockHolder(t, path)
	recordHolder(t, path, holder)

	notified := false
	_, err := AcquireLock(t.Context(), path, LockInfo{PID: os.Getpid()},
		LockOptions{OrphanWait: time.Hour, Notify: func(string) { notified = true }})
	var held *LockHeldError
	require.True(t, errors.As(err, &held), "%v", err)
	assert.False(t, held.HolderGone)
	assert.Contains(t, err.Error(), "another ralph is running in this workspace: pid "+strconv.Itoa(holder))
	assert.False(t, notified, "nothing to wait for")
}

func TestLockWaitOptionWaitsForARunningRalph(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	holder, release := lockHolder(t, path)
	recordHolder(t, path, holder)

	notes := make(chan string, 4)
	got := make(chan error, 1)
	go func() {
		lock, err := AcquireLock(t.Context(), path, LockInfo{PID: os.Getpid()},
			LockOptions{Wait: true, Notify: func(s string) { notes <- s }})
		if err == nil {
			err = lock.Release()
		}
		got <- err
	}()
	assert.Contains(t, firstNote(t, notes, got), "waiting for the ralph running in this workspace (pid "+strconv.Itoa(holder))
	release()
	require.NoError(t, <-got)
}
