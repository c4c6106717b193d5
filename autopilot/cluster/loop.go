package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/runfiles"
)

// LoopRunner starts each task's loop as a `ralph loop` child process; its
// Run is a WorkerOptions.Run.
type LoopRunner struct {
	// Ralph is the ralph binary.
	Ralph string
	// Env is added to the loops' environment.
	Env []string
}

// loopGrace is how long what a loop leaves behind in its process group
// gets between SIGTERM and SIGKILL once the loop has exited.
const loopGrace = 10 * time.Second

// stopEvery is how often a stop request is written again until the loop
// ends: a loop that was still starting when the first was written removes
// it as stale.
const stopEvery = 500 * time.Millisecond

// Run starts `ralph loop --quiet -c … -P OBJECTIVE` in job.Dir, its output
// appended to job.Output. The loop leads a process group of its own, so a
// Ctrl-C meant for the worker reaches it only as the worker decides; and
// it dies with the worker (on Linux), so a worker killed outright leaves
// no loop behind to work on a task another worker now has; what its agent
// started is found by the group's mark, job.Mark (see leftovers.go). ctx
// is not used to stop the loop: the worker ends its loops with Stop,
// which lets them finish their iteration.
func (r LoopRunner) Run(_ context.Context, job WorkerJob) (WorkerLoop, error) {
	out, err := os.OpenFile(job.Output, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the loop's output file: %w", err)
	}
	args := []string{"loop", "--quiet"}
	for _, c := range job.ConfigFiles {
		args = append(args, "-c", c)
	}
	args = append(args, "-P", job.ObjectiveFile)
	args = append(args, job.Agent.Flags()...)
	cmd := exec.Command(r.Ralph, args...) //nolint:gosec // ralph runs itself
	cmd.Dir = job.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = slices.Concat(os.Environ(), r.Env, job.Pin.Env())
	mark := job.Mark
	if mark == "" {
		mark = procgroup.NewMark()
	}
	g, err := procgroup.StartMarked(cmd, loopGrace, mark)
	if err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("start `%s loop` for task %s: %w", r.Ralph, job.TaskID, err)
	}
	l := &loopProcess{cmd: cmd, group: g, dir: job.Dir, output: job.Output, done: make(chan struct{})}
	go l.wait(out)
	return l, nil
}

// loopProcess is a `ralph loop` a worker started.
type loopProcess struct {
	cmd    *exec.Cmd
	group  *procgroup.Group
	dir    string
	output string
	done   chan struct{}
	res    autopilot.LoopResult

	mu       sync.Mutex
	stopping bool // a stop request is being written
	hurried  bool // SIGTERM was sent
}

// wait reaps the loop and whatever it left in its group, and reads how it
// ended.
func (l *loopProcess) wait(out *os.File) {
	defer close(l.done)
	_ = l.cmd.Wait()
	_ = l.group.EnsureGone(nil)
	_ = out.Close()
	l.res = l.result()
}

func (l *loopProcess) result() autopilot.LoopResult {
	res := autopilot.LoopResult{}
	// The loop and its group are gone: nobody holds its lock.
	if st, err := runfiles.ReadExitedStatus(l.dir, 0, time.Now()); err == nil && st.Ended != nil {
		res = autopilot.LoopResult{Reason: string(st.Ended.Reason), Message: st.Ended.Message, Cost: st.Cost()}
	}
	ps := l.cmd.ProcessState
	res.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
		res.Message = fmt.Sprintf("the loop was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	if res.Message == "" && res.ExitCode != 0 {
		// It ended before its run did (a config it refused, say): its
		// output says why.
		res.Message = fmt.Sprintf("ralph loop exited %d: %s", res.ExitCode, autopilot.LastOutputLine(l.output))
	}
	return res
}

// Wait blocks until the loop has ended and its process group is gone.
func (l *loopProcess) Wait() autopilot.LoopResult {
	<-l.done
	return l.res
}

// Stop asks the loop to stop. runfiles.StopAtBoundary writes a stop
// request, as `ralph stop` does: the agent finishes what it is doing and
// the run ends with reason "stopped" (exit 1). runfiles.StopNow sends
// SIGTERM, as Ctrl-C would: the loop stops its agent now and exits 130,
// reason "interrupted".
func (l *loopProcess) Stop(mode runfiles.StopMode) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch mode {
	case runfiles.StopAtBoundary:
		if !l.stopping {
			l.stopping = true
			go l.requestStop()
		}
	case runfiles.StopNow:
		if !l.hurried {
			l.hurried = true
			_ = procgroup.Interrupt(l.cmd.Process.Pid)
		}
	}
}

// requestStop writes the stop request, and again every stopEvery until
// the loop ends.
func (l *loopProcess) requestStop() {
	tick := time.NewTicker(stopEvery)
	defer tick.Stop()
	for {
		// One written after the loop ended is harmless: the next loop in
		// the worktree removes it as stale when it starts.
		_ = runfiles.RequestStop(l.dir, runfiles.StopAtBoundary)
		select {
		case <-l.done:
			return
		case <-tick.C:
		}
	}
}
