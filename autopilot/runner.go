package autopilot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// Job is one task's loop, as a runner starts it.
type Job struct {
	// Run is the autopilot run the job belongs to.
	Run  string
	Task string
	// Attempt counts the task's attempts in the run from 1: a retry after a
	// conflict is the next one.
	Attempt int
	// Dir is the task's worktree, where its loop runs and keeps its .ralph/.
	Dir string
	// Configs are the user's config files; Overlay is the task's config
	// file, laid over them: its acceptance criteria.
	Configs []string
	Overlay string
	// TaskCommands are the task's own acceptance commands when the config
	// trusts them (autopilot.trust_task_commands); Overlay has them too.
	TaskCommands []criteria.Spec
	// ObjectiveFile holds the task's objective (-P).
	ObjectiveFile string
	// Agent is the backend and model the task names, checked (CheckAgent);
	// zero runs the config's.
	Agent Agent
	// Output receives the loop's stdout and stderr.
	Output string
	// Mode is how the loop starts: a new run, --resume or --fresh, as the
	// engine names them.
	Mode runfiles.StartMode
	// Pin is where Dir's repository is, as the autopilot made the
	// worktree: the loop's git is told, and never follows the worktree's
	// .git file, which its agent can rewrite (see git.Pin).
	Pin git.Pin
}

// loopFlags are `ralph loop`'s flags for a loop started in mode with the
// objective in objective: runfiles.StartNew is a task's first loop,
// runfiles.StartResume one that was cut off, runfiles.StartFresh a retry
// after a conflict. A resumed run keeps the objective it started with,
// and `ralph loop` refuses -P beside --resume.
func loopFlags(mode runfiles.StartMode, objective string) []string {
	switch mode {
	case runfiles.StartResume:
		return []string{"--resume"}
	case runfiles.StartFresh:
		return []string{"-P", objective, "--fresh"}
	case runfiles.StartNew:
	}
	return []string{"-P", objective}
}

// Runner runs tasks' loops. Local slots run `ralph loop` as child
// processes; other runners may run them elsewhere.
type Runner interface {
	// Start starts job's loop.
	Start(ctx context.Context, job Job) (Handle, error)
	// Attach watches a loop that a previous autopilot started and that is
	// still running in dir.
	Attach(ctx context.Context, dir string) (Handle, error)
}

// Elsewhere is a Runner whose loops run on other machines: Where names
// them, for the line that says where a task runs, since the worktree here
// only prepares the task's branch.
type Elsewhere interface {
	Where() string
}

// TaskCleaner is a Runner that keeps something of its own for a task,
// beyond its worktree and branch (a remote's refs): CleanUp removes it once
// the task is done. keepBranch keeps the task's branch on the remote: it
// is the head of a pull request still open.
type TaskCleaner interface {
	CleanUp(ctx context.Context, task string, keepBranch bool) error
}

// Handle is one running loop. A worker's loop (cluster.WorkerLoop) is
// stopped the other way: gently first, its task handed back to another
// worker, where the autopilot's stop lets its loops finish and its stop
// --now interrupts them to resume later in the same worktree.
type Handle interface {
	// PID is the loop's process, 0 when it has none here.
	PID() int
	// Wait blocks until the loop ends and says how.
	Wait() LoopResult
	// Interrupt asks the loop to stop now (runfiles.StopNow, as Ctrl-C
	// would), leaving it resumable.
	Interrupt()
}

// LoopResult is how a task's loop ended.
type LoopResult struct {
	// ExitCode is the loop's exit status.
	ExitCode int
	// Reason is its termination reason, when its state says one.
	Reason string
	// Message says what happened, for the task's failure reason.
	Message string
	// Cost is what the loop's run cost, as its state says.
	Cost runfiles.CostTotal
}

// Completed reports whether the loop finished its objective.
func (r LoopResult) Completed() bool { return r.ExitCode == exitcode.OK }

// Interrupted reports whether the loop was cut off and can be resumed.
func (r LoopResult) Interrupted() bool { return r.ExitCode == exitcode.Interrupted }

// LocalRunner runs each loop as a `ralph loop` child process.
type LocalRunner struct {
	// Ralph is the ralph binary.
	Ralph string
	// Env is added to the loops' environment.
	Env []string
	// DropEnv names variables of ralph's environment the loops must not
	// inherit (a crash-test hook meant for the autopilot itself).
	DropEnv []string
	// Sets are the autopilot's --set assignments, which every loop gets
	// too, so that a task runs with the config the autopilot checked.
	// Those of the keys the task's overlay writes (acceptance_criteria,
	// sandbox) are left out: the overlay holds their merged value already,
	// and the loop's --set would lay the autopilot's over the task's own.
	Sets []string
}

// Start runs `ralph loop` in job.Dir. The loop gets its own process group,
// so a Ctrl-C meant for the autopilot reaches it only as the autopilot
// decides, and it outlives an autopilot that is killed: the next one
// re-attaches to it.
func (r LocalRunner) Start(ctx context.Context, job Job) (Handle, error) {
	out, err := ralphdir.OpenFile(filepath.Dir(job.Output), job.Output, os.O_CREATE|os.O_APPEND|os.O_WRONLY, ralphdir.FileMode)
	if err != nil {
		return nil, err
	}
	args := []string{"loop", "--quiet"}
	for _, c := range append(slices.Clone(job.Configs), job.Overlay) {
		args = append(args, "-c", c)
	}
	for _, s := range r.Sets {
		if !slices.Contains(overlayKeys, topKey(s)) {
			args = append(args, "--set", s)
		}
	}
	args = append(args, loopFlags(job.Mode, job.ObjectiveFile)...)
	args = append(args, job.Agent.Flags()...)
	cmd := exec.Command(r.Ralph, args...) //nolint:gosec // ralph runs itself
	cmd.Dir = job.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = slices.Concat(r.environ(), r.Env, job.Pin.Env())
	procgroup.Detach(cmd)
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("start the loop of %s: %w", job.Task, err)
	}
	h := &childLoop{cmd: cmd, dir: job.Dir, output: job.Output, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = out.Close()
		close(h.done)
	}()
	return h, nil
}

// overlayKeys are the top-level keys a task's overlay (Autopilot.overlay)
// writes.
var overlayKeys = []string{"acceptance_criteria", "sandbox"}

// topKey is the top-level key of a --set assignment.
func topKey(set string) string {
	key, _, _ := strings.Cut(set, "=")
	key, _, _ = strings.Cut(key, ".")
	return strings.TrimSpace(key)
}

func (r LocalRunner) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(r.DropEnv, name) {
			env = append(env, kv)
		}
	}
	return env
}

// childLoop is a loop this autopilot started.
type childLoop struct {
	cmd    *exec.Cmd
	dir    string
	output string
	done   chan struct{}
}

func (h *childLoop) PID() int { return h.cmd.Process.Pid }

func (h *childLoop) Wait() LoopResult {
	<-h.done
	res := exitedLoopResult(h.dir)
	if res.Reason != "" {
		// Its run ended, and says how, whatever became of the process
		// after (a signal on its way out).
		return res
	}
	res.ExitCode = h.cmd.ProcessState.ExitCode()
	if ws, ok := h.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
		res.Message = "the loop was killed by " + ws.Signal().String()
	}
	if res.Message == "" && res.ExitCode != exitcode.OK {
		// It ended before its run did (a config it refused, say): its
		// output says why.
		res.Message = LastOutputLine(h.output)
	}
	return res
}

// LastOutputLine is the last non-empty line of a loop's output file at
// path, or a pointer to the file when it has none: why a loop that ended
// before its run did ended.
func LastOutputLine(path string) string {
	data, err := os.ReadFile(path)
	if err == nil {
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		if last := bytes.TrimSpace(lines[len(lines)-1]); len(last) > 0 {
			return string(last)
		}
	}
	return "see " + path
}

// Interrupt sends SIGTERM, which a loop takes as an interrupt: it stops
// its agent, checkpoints and exits 130, resumable.
func (h *childLoop) Interrupt() { _ = procgroup.Interrupt(h.cmd.Process.Pid) }

// Attach watches the loop holding dir's loop lock until it lets go.
func (r LocalRunner) Attach(ctx context.Context, dir string) (Handle, error) {
	held, info := runfiles.LockHeld(runfiles.In(dir).Lock())
	if !held {
		return nil, errors.New("no loop is running in " + dir)
	}
	h := &attachedLoop{pid: info.PID, dir: dir, done: make(chan struct{})}
	go h.watch(ctx)
	return h, nil
}

// attachedLoop is a loop started by an earlier autopilot: not a child, so
// its end is seen as the release of its lock and read from its state.
type attachedLoop struct {
	pid  int
	dir  string
	done chan struct{}
	res  LoopResult
}

func (h *attachedLoop) PID() int { return h.pid }

// watch waits for the loop's lock to be free. The lock is taken only to
// learn that; it is let go at once.
func (h *attachedLoop) watch(ctx context.Context) {
	defer close(h.done)
	fl := ralphdir.Lock(runfiles.In(h.dir).Lock())
	if ok, err := fl.TryLockContext(ctx, 250*time.Millisecond); ok && err == nil {
		_ = fl.Unlock()
	}
	h.res = loopResultFromState(h.dir)
	if h.res.Reason == "" {
		h.res = LoopResult{ExitCode: exitcode.Interrupted, Message: "the loop stopped without ending its run"}
	}
}

func (h *attachedLoop) Wait() LoopResult {
	<-h.done
	return h.res
}

func (h *attachedLoop) Interrupt() { _ = procgroup.Interrupt(h.pid) }

// loopResultFromState reads how the loop in dir ended from its state; the
// zero result when its run has not ended.
func loopResultFromState(dir string) LoopResult {
	return loopResult(runfiles.ReadStatus(dir, 0, time.Now()))
}

// exitedLoopResult is loopResultFromState of a loop whose process this
// autopilot saw exit, without asking who holds its lock.
func exitedLoopResult(dir string) LoopResult {
	return loopResult(runfiles.ReadExitedStatus(dir, 0, time.Now()))
}

func loopResult(st runfiles.Status, err error) LoopResult {
	if err != nil || st.Ended == nil {
		return LoopResult{}
	}
	return LoopResult{ExitCode: st.Ended.ExitCode, Reason: string(st.Ended.Reason), Message: st.Ended.Message, Cost: st.Cost()}
}

// loopState says what a worktree's loop is doing, for reconciliation.
type loopState int

const (
	loopNone    loopState = iota // no run in the worktree
	loopRunning                  // a live process holds its lock
	loopEnded                    // its run ended
	loopCut                      // its run was cut off: resume it
)

func inspectLoop(dir string) (loopState, LoopResult) {
	if held, _ := runfiles.LockHeld(runfiles.In(dir).Lock()); held {
		return loopRunning, LoopResult{}
	}
	st, err := runfiles.ReadStatus(dir, 0, time.Now())
	switch {
	case err != nil || st.RunID == "":
		if log, logErr := runfiles.CurrentLog(dir); logErr == nil && len(runfiles.LastEvents(log, 1)) > 0 {
			// A loop killed before its first checkpoint: its log is
			// the run, and a resume rebuilds it from there.
			return loopCut, LoopResult{}
		}
		return loopNone, LoopResult{}
	case st.Ended != nil && st.Ended.Reason != runfiles.ReasonInterrupted:
		return loopEnded, LoopResult{ExitCode: st.Ended.ExitCode, Reason: string(st.Ended.Reason), Message: st.Ended.Message, Cost: st.Cost()}
	}
	return loopCut, LoopResult{}
}
