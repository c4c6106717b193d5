package runfiles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/ralph-loop/ralph/internal/fileholders"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// LockInfo says who holds the workspace lock. It is written into the lock
// file so a refusal can name the holder.
type LockInfo struct {
	RunID     string    `json:"run_id"`
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"started_at"`
}

// Lock is the held workspace lock.
type Lock struct {
	fl   *flock.Flock
	path string
	// Previous is what a dead holder left in the lock file, when the lock was
	// taken over; zero otherwise.
	Previous LockInfo
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// DefaultOrphanLockWait is how long AcquireLock waits for a lock whose
// recorded holder is dead. Such a lock is held by a copy of the dead
// ralph's descriptor: a child it forked just before it died keeps one
// until it execs, which under load can take a while.
const DefaultOrphanLockWait = 10 * time.Second

// LockOptions say how AcquireLock behaves when the lock is held.
type LockOptions struct {
	// Wait blocks until a running holder finishes, instead of failing.
	Wait bool
	// OrphanWait bounds the wait for a lock whose recorded holder is no
	// longer running; DefaultOrphanLockWait when zero.
	OrphanWait time.Duration
	// Notify is told what AcquireLock is waiting for; nil discards it.
	Notify func(string)
}

func (o LockOptions) notify(msg string) {
	if o.Notify != nil {
		o.Notify(msg)
	}
}

func (o LockOptions) orphanWait() time.Duration {
	if o.OrphanWait > 0 {
		return o.OrphanWait
	}
	return DefaultOrphanLockWait
}

// lockRetry is how often a held lock is tried again.
const lockRetry = 20 * time.Millisecond

// AcquireLock takes .ralph/loop.lock for this process. A lock held by a
// running ralph fails at once with *LockHeldError, or, with opts.Wait, is
// waited for until it is free or ctx is done. A lock whose recorded holder
// is no longer running is waited for a moment (opts.OrphanWait) and then
// refused, naming the processes that really hold it. A lock file left by
// a process that died is taken over, and the previous holder is reported
// in Lock.Previous.
//
// The lock's directory is .ralph/ (or the autopilot's, the same): it is
// made, and checked as every directory ralph keeps files in, here, before
// anything else of a run touches it.
func AcquireLock(ctx context.Context, path string, info LockInfo, opts LockOptions) (*Lock, error) {
	dir := filepath.Dir(path)
	if err := ralphdir.MkdirAll(dir, dir); err != nil {
		return nil, err
	}
	fl := ralphdir.Lock(path)
	locked, err := fl.TryLock()
	if err != nil {
		return nil, ralphdir.Explain(path, fmt.Errorf("lock %s: %w", path, err))
	}
	if !locked {
		if err := waitForLock(ctx, fl, path, opts); err != nil {
			return nil, err
		}
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

// waitForLock decides what a held lock means and returns once fl is
// locked, or with the reason it is not.
func waitForLock(ctx context.Context, fl *flock.Flock, path string, opts LockOptions) error {
	holder, locked, err := holderInfo(ctx, fl, path)
	if locked || err != nil {
		return err
	}
	if holderRunning(path, holder) {
		if !opts.Wait {
			return &LockHeldError{Path: path, Holder: holder}
		}
		opts.notify(fmt.Sprintf("waiting for the ralph running in this workspace (pid %d, run %s) to finish", holder.PID, holder.RunID))
		return lockWithin(ctx, fl, path, 0)
	}
	opts.notify(orphanWaitMessage(path, holder, opts.orphanWait()))
	err = lockWithin(ctx, fl, path, opts.orphanWait())
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return err
	}
	holders, _ := lockHolders(path)
	if opts.Wait {
		opts.notify(fmt.Sprintf("still held by %s; waiting for it", describeHolders(holders)))
		return lockWithin(ctx, fl, path, 0)
	}
	return &LockHeldError{Path: path, Holder: holder, HolderGone: true, Holders: holders}
}

// lockWithin tries fl until it is locked, ctx is done or limit has passed
// (no limit when zero); running out of time is context.DeadlineExceeded.
func lockWithin(ctx context.Context, fl *flock.Flock, path string, limit time.Duration) error {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	locked, err := fl.TryLockContext(ctx, lockRetry)
	switch {
	case locked:
		return nil
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("wait for lock %s: %w", path, err)
}

func orphanWaitMessage(path string, holder LockInfo, limit time.Duration) string {
	who := "no ralph"
	if holder.PID != 0 {
		who = fmt.Sprintf("pid %d, which is no longer running", holder.PID)
	}
	holders, _ := lockHolders(path)
	return fmt.Sprintf("the workspace lock names %s, yet %s still holds it; waiting up to %s for it to come free",
		who, describeHolders(holders), limit)
}

func describeHolders(procs []fileholders.Process) string {
	if len(procs) == 0 {
		return "another process"
	}
	return fileholders.Describe(procs)
}

// lockHolders returns the processes that hold the lock on path: those the
// kernel lists a lock for, or, when it lists none (the lock was released
// meanwhile, or fdinfo could not be read), every process that has the file
// open, which includes ralphs merely reading it.
func lockHolders(path string) ([]fileholders.Process, error) {
	procs, err := fileholders.Find(path)
	if lockers := fileholders.Lockers(procs); len(lockers) > 0 {
		return lockers, nil
	}
	return procs, err
}

// holderRunning reports whether the recorded holder is alive and, where
// the open files of processes can be read, really has the lock file open:
// a recorded pid that was reused by an unrelated process does not count.
func holderRunning(path string, holder LockInfo) bool {
	if !ProcessAlive(holder.PID) {
		return false
	}
	holders, err := lockHolders(path)
	if err != nil {
		return true
	}
	for _, p := range holders {
		if p.PID == holder.PID {
			return true
		}
	}
	return false
}

// write replaces the lock file's contents in place. Renaming a new file over
// it would give it a new inode and split the lock in two.
func (l *Lock) write(info LockInfo) error {
	if err := writeLockInfo(l.path, info); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	return nil
}

// writeLockInfo writes info into the lock file at path, from lockInfoAt
// on, and cuts what is left of longer old content.
func writeLockInfo(path string, info LockInfo) error {
	data, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	f, err := ralphdir.OpenFile(filepath.Dir(path), path, os.O_WRONLY|os.O_CREATE, ralphdir.FileMode)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(lockInfoAt); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(data, '\n'), lockInfoAt); err != nil {
		return err
	}
	return f.Close()
}

// Update rewrites the holder information (the run id is known only once the
// run is opened).
func (l *Lock) Update(info LockInfo) error { return l.write(info) }

// Release empties the lock file of its holder information and unlocks
// it. The file stays, because removing it could let two processes lock
// two different files.
func (l *Lock) Release() error {
	if f, err := ralphdir.OpenFile(filepath.Dir(l.path), l.path, os.O_WRONLY, 0); err == nil {
		_ = f.Truncate(lockInfoAt)
		_ = f.Close()
	}
	return l.fl.Unlock()
}

// holderInfo reads who holds the lock. The holder writes its details just
// after it takes the lock, so a refusal that lands in between waits a
// moment for them rather than report an unknown holder; if the lock comes
// free meanwhile, it is taken and locked says so.
func holderInfo(ctx context.Context, fl *flock.Flock, path string) (info LockInfo, locked bool, err error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		info, readErr := ReadLockInfo(path)
		if (readErr == nil && info.PID != 0) || time.Now().After(deadline) {
			return info, false, nil
		}
		select {
		case <-ctx.Done():
			return info, false, ctx.Err()
		case <-time.After(lockRetry):
		}
		if locked, err := fl.TryLock(); locked || err != nil {
			return info, locked, err
		}
	}
}

// ReadLockInfo reads the holder information from a lock file. With an
// error the information is zero: a file that does not decode whole (a
// field of the wrong type, a bad time) must not name a pid to kill.
func ReadLockInfo(path string) (LockInfo, error) {
	var info LockInfo
	data, err := readLockFile(path)
	if err != nil {
		return info, err
	}
	if len(data) == 0 {
		return info, errors.New("lock file empty")
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return LockInfo{}, err
	}
	return info, nil
}

// LockHeld reports whether a live process holds the lock at path, without
// keeping it. Where /proc says who holds a lock it asks only that, so a
// status read beside a starting run (ralph status, ralph serve) never
// takes the lock from under it; elsewhere it tries the lock and lets go
// at once.
func LockHeld(path string) (bool, LockInfo) {
	info, _ := ReadLockInfo(path)
	if _, err := os.Stat(path); err != nil {
		return false, info
	}
	if held, err := lockedPerProc(path, info); err == nil {
		return held, info
	}
	fl := ralphdir.Lock(path)
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

// lockedPerProc asks /proc whether the lock at path is held: by the
// holder its file names, the usual answer, else by any process (a child
// forked a moment before its parent died holds it too).
func lockedPerProc(path string, info LockInfo) (bool, error) {
	if info.PID > 0 {
		if held, err := fileholders.Locks(info.PID, path); err != nil || held {
			return held, err
		}
	}
	procs, err := fileholders.Find(path)
	return len(fileholders.Lockers(procs)) > 0, err
}

// readNoFollow reads the file at path, but not through a link: what a
// reader of ralph's files (status, serve) reads is ralph's own.
func ReadNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|ralphdir.NoFollow, 0)
	if err != nil {
		return nil, ralphdir.Explain(path, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// readLockFile reads the holder information in the lock file at path,
// which starts at lockInfoAt, not through a link.
func readLockFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|ralphdir.NoFollow, 0)
	if err != nil {
		return nil, ralphdir.Explain(path, err)
	}
	defer f.Close()
	if _, err := f.Seek(lockInfoAt, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}
