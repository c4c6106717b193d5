package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// LockInfo says who holds the workspace lock. It is written into the lock
// file so a refusal can name the holder.
type LockInfo struct {
	RunID     string    `json:"run_id"`
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"started_at"`
}

// LockHeldError means another live ralph holds the workspace.
type LockHeldError struct {
	Path   string
	Holder LockInfo
}

func (e *LockHeldError) Error() string {
	if e.Holder.PID == 0 {
		return fmt.Sprintf("another ralph is running in this workspace (lock %s)", e.Path)
	}
	return fmt.Sprintf("another ralph is running in this workspace: pid %d on %s, run %s, started %s (lock %s)",
		e.Holder.PID, e.Holder.Host, e.Holder.RunID,
		e.Holder.StartedAt.Local().Format(time.DateTime), e.Path)
}

// Hint tells the user what to do about it.
func (e *LockHeldError) Hint() string {
	if e.Holder.PID == 0 {
		return "wait for it to finish (ralph loop --wait), or stop it with `ralph stop`"
	}
	return fmt.Sprintf("wait for it to finish (ralph loop --wait), or stop it with `ralph stop` or `kill %d`", e.Holder.PID)
}

// ExitCode makes a held lock a fatal error.
func (e *LockHeldError) ExitCode() int { return ExitFatal }

// Lock is the held workspace lock.
type Lock struct {
	fl   *flock.Flock
	path string
	// Previous is what a dead holder left in the lock file, when the lock was
	// taken over; zero otherwise.
	Previous LockInfo
}

// AcquireLock takes .ralph/loop.lock for this process. Without wait it fails
// at once with *LockHeldError; with wait it blocks until the lock is free or
// ctx is done. A lock file left by a process that died is taken over, and
// the previous holder is reported in Lock.Previous.
func AcquireLock(ctx context.Context, path string, info LockInfo, wait bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	fl := flock.New(path)
	locked, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !locked && wait {
		locked, err = fl.TryLockContext(ctx, 200*time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("wait for lock %s: %w", path, err)
		}
	}
	if !locked {
		return nil, &LockHeldError{Path: path, Holder: holderInfo(ctx, path)}
	}
	l := &Lock{fl: fl, path: path}
	if prev, err := ReadLockInfo(path); err == nil && prev.PID != 0 && prev.PID != os.Getpid() {
		l.Previous = prev
	}
	if err := l.write(info); err != nil {
		_ = fl.Unlock()
		return nil, err
	}
	return l, nil
}

// write replaces the lock file's contents in place. Renaming a new file over
// it would give it a new inode and split the lock in two.
func (l *Lock) write(info LockInfo) error {
	data, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encode lock: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	if _, err := f.WriteAt(append(data, '\n'), 0); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	return nil
}

// Update rewrites the holder information (the run id is known only once the
// run is opened).
func (l *Lock) Update(info LockInfo) error { return l.write(info) }

// Release empties the lock file and unlocks it. The file stays, because
// removing it could let two processes lock two different files.
func (l *Lock) Release() error {
	_ = os.Truncate(l.path, 0)
	return l.fl.Unlock()
}

// holderInfo reads who holds the lock. The holder writes its details just
// after it takes the lock, so a refusal that lands in between waits a
// moment for them rather than report an unknown holder.
func holderInfo(ctx context.Context, path string) LockInfo {
	deadline := time.Now().Add(2 * time.Second)
	for {
		info, err := ReadLockInfo(path)
		if (err == nil && info.PID != 0) || time.Now().After(deadline) {
			return info
		}
		select {
		case <-ctx.Done():
			return info
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ReadLockInfo reads the holder information from a lock file.
func ReadLockInfo(path string) (LockInfo, error) {
	var info LockInfo
	data, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if len(data) == 0 {
		return info, errors.New("lock file empty")
	}
	err = json.Unmarshal(data, &info)
	return info, err
}

// LockHeld reports whether a live process holds the lock at path, without
// keeping it.
func LockHeld(path string) (bool, LockInfo) {
	info, _ := ReadLockInfo(path)
	if _, err := os.Stat(path); err != nil {
		return false, info
	}
	fl := flock.New(path)
	locked, err := fl.TryLock()
	if err != nil {
		return false, info
	}
	if locked {
		_ = fl.Unlock()
		return false, info
	}
	return true, info
}

// processAlive reports whether pid names a running process.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
