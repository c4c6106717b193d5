package main

import (
	"fmt"
	"os"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/testhook"
)

// The variables through which a test sets the registered ralph's seams
// (testSeams), for the ralph it runs and, but for crashEnv and
// interruptEnv, which an autopilot keeps to itself, the ralphs that one
// starts. Only this test binary reads them.
const (
	// crashEnv: "point:n[,point:n…]", see testhook.Crash.
	crashEnv = "RALPH_TEST_CRASH_AT"
	// interruptEnv: "point:n[,point:n…]", see testhook.Interrupt.
	interruptEnv = "RALPH_TEST_INTERRUPT_AT"
	// writeFaultEnv: "file:n:ERRNO[,…]", see testhook.WriteFault.
	writeFaultEnv = "RALPH_TEST_WRITE_ERROR"
	// clockOffsetEnv: a Go duration added to the engine's clock.
	clockOffsetEnv = "RALPH_TEST_CLOCK_OFFSET"
	// clockJumpEnv: a Go duration added to the engine's clock, whose
	// sleeps move it on at once (testhook.JumpClock); it replaces
	// clockOffsetEnv's clock.
	clockJumpEnv = "RALPH_TEST_CLOCK_JUMP"
	// statsEnv: the file ralph appends its resource use to.
	statsEnv = "RALPH_TEST_STATS_FILE"
)

// seamsFromEnv makes the seams the environment asks for.
func seamsFromEnv() (testSeams, error) {
	s := testSeams{dropEnv: []string{crashEnv, interruptEnv}}
	var err error
	if spec := os.Getenv(crashEnv); spec != "" {
		if s.fault, err = testhook.Crash(spec); err != nil {
			return s, fmt.Errorf("%s: %w", crashEnv, err)
		}
	}
	if spec := os.Getenv(interruptEnv); spec != "" {
		if s.interrupt, err = testhook.Interrupt(spec); err != nil {
			return s, fmt.Errorf("%s: %w", interruptEnv, err)
		}
	}
	if spec := os.Getenv(writeFaultEnv); spec != "" {
		if s.writeFault, err = testhook.WriteFault(spec); err != nil {
			return s, fmt.Errorf("%s: %w", writeFaultEnv, err)
		}
	}
	if spec := os.Getenv(clockOffsetEnv); spec != "" {
		if s.now, err = testhook.Clock(spec); err != nil {
			return s, fmt.Errorf("%s: %w", clockOffsetEnv, err)
		}
	}
	if spec := os.Getenv(clockJumpEnv); spec != "" {
		if s.now, s.sleep, err = testhook.JumpClock(spec); err != nil {
			return s, fmt.Errorf("%s: %w", clockJumpEnv, err)
		}
	}
	if path := os.Getenv(statsEnv); path != "" {
		s.reporter = func(rep engine.Reporter) engine.Reporter { return testhook.WithStats(path, rep) }
		s.exit = func() { testhook.ExitStats(path) }
	}
	return s, nil
}
