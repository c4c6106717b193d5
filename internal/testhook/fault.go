// Package testhook holds the hooks through which ralph's end-to-end tests
// reach into a running ralph: kill it at a named point, fail its writes,
// move its clock, send it a Ctrl-C, sample its resource use. Each is made
// from a spec string; only cmd/ralph's test binary, which registers ralph as
// a command of its own, makes them, from its environment, and hands them to
// ralph. The shipped ralph neither imports this package nor reads a
// variable that would install one.
package testhook

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Crash returns the engine's fault hook for spec, "point:n[,point:n…]":
// it kills ralph with SIGKILL the n-th time it reaches the named point (see
// engine.Fault*), or, for append.torn, writes half of that step's bytes
// first.
func Crash(spec string) (func(string) bool, error) {
	reached, err := pointCounter("crash hook", spec)
	if err != nil {
		return nil, err
	}
	return func(point string) bool {
		if point == "die" {
			die()
		}
		if !reached(point) {
			return false
		}
		if point == "append.torn" {
			return true // the engine writes half the step, then calls "die"
		}
		die()
		return false
	}, nil
}

// pointCounter reads "point:n[,point:n…]" for the hook name and
// returns a function that counts each point reached and reports whether
// this is its n-th time. Safe from any goroutine.
func pointCounter(name, spec string) (func(point string) bool, error) {
	targets, err := parsePoints(name, spec)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	hits := map[string]int{}
	return func(point string) bool {
		mu.Lock()
		defer mu.Unlock()
		hits[point]++
		return targets[point] == hits[point]
	}, nil
}

// writeFaultErrnos are the errors a disk gives that the hook can play.
var writeFaultErrnos = map[string]syscall.Errno{
	"ENOSPC": syscall.ENOSPC, "EIO": syscall.EIO, "EFBIG": syscall.EFBIG,
	"EROFS": syscall.EROFS, "EDQUOT": syscall.EDQUOT,
}

// WriteFault returns the engine's write-fault hook for spec,
// "file:n:ERRNO[,…]": it fails the n-th and every later write to one of
// ralph's files (engine.File*) with that errno, as a disk that filled up or
// broke would, until ralph exits.
func WriteFault(spec string) (func(string) error, error) {
	type fault struct {
		from  int
		errno syscall.Errno
	}
	faults := map[string]fault{}
	for _, part := range strings.Split(spec, ",") {
		fields := strings.Split(part, ":")
		if len(fields) != 3 {
			return nil, fmt.Errorf("write-fault hook: want file:n:ERRNO, got %q", part)
		}
		n, err := strconv.Atoi(fields[1])
		errno, ok := writeFaultErrnos[fields[2]]
		if err != nil || n < 1 || !ok {
			return nil, fmt.Errorf("write-fault hook: want file:n:ERRNO with n ≥ 1 and ERRNO one of ENOSPC, EIO, EFBIG, EROFS, EDQUOT, got %q", part)
		}
		faults[fields[0]] = fault{from: n, errno: errno}
	}
	var mu sync.Mutex
	writes := map[string]int{}
	return func(file string) error {
		mu.Lock()
		defer mu.Unlock()
		writes[file]++
		if f, ok := faults[file]; ok && writes[file] >= f.from {
			return f.errno
		}
		return nil
	}, nil
}

// Clock returns the engine's clock for spec, a Go duration ("13s") added
// to the real one, so a test can resume a run as if it came back that much
// later, without waiting for it.
func Clock(spec string) (func() time.Time, error) {
	offset, err := time.ParseDuration(spec)
	if err != nil {
		return nil, fmt.Errorf("clock hook: %w", err)
	}
	return func() time.Time { return time.Now().Add(offset) }, nil
}

// JumpClock returns the engine's clock and sleep for spec, a Go duration
// added to the real clock as Clock's: a sleep does not wait but moves the
// clock on by what it would have waited, so a test sees a run go past a
// wait of hours (a pacing budget's) at once, as its log records it.
func JumpClock(spec string) (now func() time.Time, sleep func(context.Context, time.Duration) error, err error) {
	offset, err := time.ParseDuration(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("jumping clock hook: %w", err)
	}
	var mu sync.Mutex
	now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.Now().Add(offset)
	}
	sleep = func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		offset += max(d, 0)
		return nil
	}
	return now, sleep, nil
}

// Interrupt returns a maker of the fault hook for spec,
// "point:n[,point:n…]", laid over next (the crash hook, or nil): the hook
// sends ralph SIGINT, as a Ctrl-C would, the n-th time it reaches the named
// point, and returns only once ctx, which the signal cancels, is done: what
// follows the point then runs as it would after a real interrupt. The spec
// is checked now; ctx is the command's, known only once it runs.
func Interrupt(spec string) (func(ctx context.Context, next func(string) bool) func(string) bool, error) {
	if !canInterruptSelf {
		return nil, fmt.Errorf("interrupt hook: a process cannot send itself a Ctrl-C on %s; run this test on Unix", runtime.GOOS)
	}
	if _, err := parsePoints("interrupt hook", spec); err != nil {
		return nil, err
	}
	return func(ctx context.Context, next func(string) bool) func(string) bool {
		return interruptAt(ctx, spec, next)
	}, nil
}

func interruptAt(ctx context.Context, spec string, next func(string) bool) func(string) bool {
	reached, _ := pointCounter("interrupt hook", spec) // checked by Interrupt
	return func(point string) bool {
		hit := reached(point)
		if hit {
			interruptSelf()
			<-ctx.Done()
		}
		if next != nil {
			return next(point)
		}
		return false
	}
}

// parsePoints reads "point:n[,point:n…]" for the hook name.
func parsePoints(name, spec string) (map[string]int, error) {
	targets := map[string]int{}
	for _, part := range strings.Split(spec, ",") {
		point, nth, ok := strings.Cut(part, ":")
		n, err := strconv.Atoi(nth)
		if !ok || err != nil || n < 1 {
			return nil, fmt.Errorf("%s: want point:n, got %q", name, part)
		}
		targets[point] = n
	}
	return targets, nil
}
