package main

import (
	"context"
	"time"

	"github.com/ralph-loop/ralph/engine"
)

// testSeams are how the end-to-end tests reach into a running ralph: kill
// it at a named point, fail its writes, move its clock, send it a Ctrl-C,
// sample its resource use (internal/testhook). The shipped ralph has none
// and reads nothing that would install one: only the test binary's
// registered ralph command (main_test.go) sets them, before it runs.
type testSeams struct {
	// fault is the crash hook of the engine and the autopilot.
	fault func(point string) bool
	// interrupt lays a hook that sends ralph a Ctrl-C over the autopilot's
	// crash hook; it needs the command's context, which that Ctrl-C cancels.
	interrupt  func(ctx context.Context, next func(string) bool) func(string) bool
	writeFault func(file string) error
	now        func() time.Time
	// sleep is the engine's sleep on now's clock, which a test's clock
	// may move on at once instead of waiting.
	sleep func(ctx context.Context, d time.Duration) error
	// reporter wraps a loop's reporter, to sample as iterations finish.
	reporter func(engine.Reporter) engine.Reporter
	// exit runs as any command ends.
	exit func()
	// dropEnv are the variables an autopilot's task loops do not inherit:
	// those that set hooks meant for the autopilot alone.
	dropEnv []string
}

var seams testSeams

// loopReporter is rep, wrapped by the test binary's reporter seam if any.
func (s testSeams) loopReporter(rep engine.Reporter) engine.Reporter {
	if s.reporter == nil {
		return rep
	}
	return s.reporter(rep)
}

// autopilotFault is the autopilot's fault hook: the crash hook, under the
// interrupt hook; nil when the test binary set neither.
func (s testSeams) autopilotFault(ctx context.Context) func(string) bool {
	if s.interrupt == nil {
		return s.fault
	}
	return s.interrupt(ctx, s.fault)
}

func (s testSeams) exited() {
	if s.exit != nil {
		s.exit()
	}
}
