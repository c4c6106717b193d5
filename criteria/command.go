package criteria

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/shell"
	"github.com/ralph-loop/ralph/internal/tail"
)

// killGrace is the time a check's process group gets between SIGTERM and
// SIGKILL: enough for a test runner to clean up its temporary files.
const killGrace = 2 * time.Second

// pipeGrace bounds how long output is still read once the group is gone.
// Only a process that left the group (setsid) can still hold the pipe, and
// the check must not wait for it.
const pipeGrace = time.Second

// tailLimit is how much of a command's output a Result keeps: the end is
// where test runners and compilers summarise.
const tailLimit = 4 << 10

// cmdResult is how a command ended.
type cmdResult struct {
	exitCode int            // -1 when killed by a signal or never started
	signal   syscall.Signal // the signal that killed it, if one did
	stopped  bool           // ralph stopped it because the context ended
	startErr error
	output   string // the tail of stdout and stderr, interleaved
	leftover error  // the group outlived SIGKILL (a process stuck in the kernel)
}

// runCommand runs script with sh -c (internal/shell) in dir, in its own process group, with
// stdin from /dev/null and ralph's environment plus extraEnv, confined by
// sb when it is set. When ctx ends
// the group gets SIGTERM, then SIGKILL after killGrace. Whatever the
// command leaves running in its group (background jobs) is stopped the same
// way once it exits, so a check never leaves a process behind.
func runCommand(ctx context.Context, feature, dir, script string, extraEnv []string, sb Sandbox) cmdResult {
	cmd, err := shell.Command(feature, script)
	if err != nil {
		return cmdResult{exitCode: -1, startErr: err}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return cmdResult{exitCode: -1, startErr: fmt.Errorf("create output pipe: %w", err)}
	}
	defer r.Close()
	// The child gets *os.File ends, so exec.Cmd starts no copying goroutine
	// and Wait returns when sh exits even if a background job still holds
	// the pipe; ralph reads the pipe itself and bounds that read.
	cmd.Dir = dir
	cmd.Env = slices.Concat(os.Environ(), extraEnv)
	cmd.Stdout, cmd.Stderr = w, w
	if sb != nil {
		cleanup, err := sb.Confine(cmd)
		if err != nil {
			_ = w.Close()
			return cmdResult{exitCode: -1, startErr: fmt.Errorf("confine it: %w", err)}
		}
		// After the group is gone, which the deferred read below waits for.
		defer cleanup()
	}
	g, err := procgroup.Start(cmd, killGrace)
	_ = w.Close()
	if err != nil {
		return cmdResult{exitCode: -1, startErr: err}
	}

	out := tail.New(tailLimit)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(out, r) // ends at EOF, or at the deadline set below
	}()

	stopped, waitErr := g.Wait(ctx)
	leftover := g.EnsureGone(nil)
	_ = r.SetReadDeadline(time.Now().Add(pipeGrace))
	<-drained

	res := exitOf(waitErr)
	res.stopped, res.output, res.leftover = stopped, outputTail(out), leftover
	return res
}

// exitOf reads the exit status out of cmd.Wait's error.
func exitOf(waitErr error) cmdResult {
	if waitErr == nil {
		return cmdResult{}
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return cmdResult{exitCode: -1, startErr: waitErr}
	}
	res := cmdResult{exitCode: ee.ExitCode()}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.signal = ws.Signal()
	}
	return res
}
