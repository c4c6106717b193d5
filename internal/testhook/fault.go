// Package testhook holds the hooks through which ralph's end-to-end tests
// reach into a running ralph: kill it at a named point, fail its writes,
// move its clock, sample its resource use. Each is off unless its
// environment variable is set, and only tests set them.
package testhook

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CrashEnv names the crash-test hook: "point:n[,point:n…]" kills ralph with
// SIGKILL the n-th time it reaches the named point (see engine.Fault*), or,
// for append.torn, writes half of that step's bytes first. Only tests set it.
const CrashEnv = "RALPH_TEST_CRASH_AT"

// Crash returns the engine's fault hook for $RALPH_TEST_CRASH_AT, or nil.
func Crash() (func(string) bool, error) {
	spec := os.Getenv(CrashEnv)
	if spec == "" {
		return nil, nil
	}
	reached, err := pointCounter(CrashEnv, spec)
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

// pointCounter reads "point:n[,point:n…]" from the variable name and
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

// WriteFaultEnv names the disk-failure test hook: "file:n:ERRNO[,…]" fails
// the n-th and every later write to one of ralph's files (engine.File*)
// with that errno, as a disk that filled up or broke would, until ralph
// exits. Only tests set it.
const WriteFaultEnv = "RALPH_TEST_WRITE_ERROR"

// writeFaultErrnos are the errors a disk gives that the hook can play.
var writeFaultErrnos = map[string]syscall.Errno{
	"ENOSPC": syscall.ENOSPC, "EIO": syscall.EIO, "EFBIG": syscall.EFBIG,
	"EROFS": syscall.EROFS, "EDQUOT": syscall.EDQUOT,
}

// WriteFault returns the engine's write-fault hook for
// $RALPH_TEST_WRITE_ERROR, or nil.
func WriteFault() (func(string) error, error) {
	spec := os.Getenv(WriteFaultEnv)
	if spec == "" {
		return nil, nil
	}
	type fault struct {
		from  int
		errno syscall.Errno
	}
	faults := map[string]fault{}
	for _, part := range strings.Split(spec, ",") {
		fields := strings.Split(part, ":")
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s: want file:n:ERRNO, got %q", WriteFaultEnv, part)
		}
		n, err := strconv.Atoi(fields[1])
		errno, ok := writeFaultErrnos[fields[2]]
		if err != nil || n < 1 || !ok {
			return nil, fmt.Errorf("%s: want file:n:ERRNO with n ≥ 1 and ERRNO one of ENOSPC, EIO, EFBIG, EROFS, EDQUOT, got %q", WriteFaultEnv, part)
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

// ClockOffsetEnv names the clock test hook: a Go duration ("13s") added to
// the engine's clock, so a test can resume a run as if it came back that
// much later, without waiting for it. Only tests set it.
const ClockOffsetEnv = "RALPH_TEST_CLOCK_OFFSET"

// Clock returns the engine's clock for $RALPH_TEST_CLOCK_OFFSET, or
// nil for the real one.
func Clock() (func() time.Time, error) {
	spec := os.Getenv(ClockOffsetEnv)
	if spec == "" {
		return nil, nil
	}
	offset, err := time.ParseDuration(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ClockOffsetEnv, err)
	}
	return func() time.Time { return time.Now().Add(offset) }, nil
}

// InterruptEnv names the interrupt-test hook: "point:n[,point:n…]" sends
// ralph SIGINT, as a Ctrl-C would, the n-th time it reaches the named point,
// and returns only once ctx, which the signal cancels, is done: what
// follows the point then runs as it would after a real interrupt. Only
// tests set it.
const InterruptEnv = "RALPH_TEST_INTERRUPT_AT"

// Interrupt returns the fault hook for $InterruptEnv, laid over next (the
// crash hook, or nil); next when the variable is not set.
func Interrupt(ctx context.Context, next func(string) bool) (func(string) bool, error) {
	spec := os.Getenv(InterruptEnv)
	if spec == "" {
		return next, nil
	}
	if !canInterruptSelf {
		return nil, fmt.Errorf("%s: a process cannot send itself a Ctrl-C on %s; run this test on Unix", InterruptEnv, runtime.GOOS)
	}
	reached, err := pointCounter(InterruptEnv, spec)
	if err != nil {
		return nil, err
	}
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
	}, nil
}

// parsePoints reads "point:n[,point:n…]" from the variable name.
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
