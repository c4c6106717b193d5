package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/internal/sandbox"
	"github.com/ralph-loop/ralph/internal/tail"
)

// defaultKillGrace is the time between SIGTERM and SIGKILL when
// Options.KillGrace is zero.
const defaultKillGrace = 10 * time.Second

// pipeGrace bounds how long output is still read once the agent's group is
// gone. Only a process that left the group (setsid) can still hold the pipes
// then, and ralph must not wait for it.
const pipeGrace = time.Second

// invocation is one agent command, fully resolved, with the functions that
// read its output.
type invocation struct {
	backend       string // for messages
	path          string // absolute path of the executable
	install       string // how to install it, for MissingBinaryError
	args          []string
	env           []string // the CLI's own variables, then Options.Env
	prompt        string
	promptOnStdin bool
	grace         time.Duration
	parse         parseFunc
	verdict       func(*events.AgentResult, int, string)
	redactor      *redact.Redactor // hides secrets in all of the above's output
	limits        OutputLimits     // resolved: 0 is no limit
	sandbox       *sandbox.Agent   // nil: unconfined
}

// stopReason says why ralph stopped an agent, if it did.
type stopReason int

const (
	stopNone        stopReason = iota // the agent exited by itself
	stopInterrupted                   // the caller's context ended
	stopTimeout                       // AgentRun.Timeout
	stopIdle                          // AgentRun.IdleTimeout
	stopForced                        // AgentRun.ForceKill, before ctx ended
)

// agentProc is one running agent and the goroutines that serve it.
type agentProc struct {
	inv     invocation
	run     events.AgentRun
	report  func(events.Activity)
	cmd     *exec.Cmd
	group   *procgroup.Group
	started time.Time

	// lastOutput is when stdout or stderr last produced bytes, as an
	// offset from started, for the inactivity limit.
	lastOutput atomic.Int64

	stdoutR, stderrR *os.File
	stdinW           *os.File // nil when stdin is /dev/null
	raw              rawLog
	stderrTail       *tail.Buffer // the last stderrTailSize bytes of stderr
	feed             *feed
	budget           *activityBudget // under report, which redacts first
	copiers          sync.WaitGroup
	stdinDone        chan struct{}
	parsed           chan events.AgentResult
	unconfine        func() // removes what the sandbox made for the run

	reason stopReason // written by watch before it signals, read after it returns
}

// runProcess runs one agent process to completion and returns its result;
// see the package documentation for what the error means. Everything the
// agent produced leaves it redacted: this is where the agent's bytes enter
// ralph, so nothing downstream sees a secret value.
func runProcess(ctx context.Context, inv invocation, run events.AgentRun, report func(events.Activity)) (events.AgentResult, error) {
	if err := ctx.Err(); err != nil {
		return events.AgentResult{}, err
	}
	if report == nil {
		report = func(events.Activity) {}
	}
	if err := checkWorkspace(run.Dir); err != nil {
		return events.AgentResult{}, fmt.Errorf("start %s: %w", inv.backend, err)
	}
	p := newAgentProc(inv, run, report)
	if err := p.start(); err != nil {
		return events.AgentResult{}, err
	}
	defer p.unconfine()
	res, err := p.wait(ctx)
	return redactResult(inv.redactor, res), err
}

// newAgentProc is the agent of inv, not started yet, its activity going to
// report.
func newAgentProc(inv invocation, run events.AgentRun, report func(events.Activity)) *agentProc {
	// Redacted before it is cut or counted: a cut through a secret value
	// would leave a part the redactor cannot recognise.
	budget := &activityBudget{report: report, limit: inv.limits.ActivityBytes}
	return &agentProc{inv: inv, run: run, report: redactingReport(inv.redactor, budget.add), budget: budget, stderrTail: tail.New(stderrTailSize)}
}

// checkWorkspace reports a missing working directory by name; otherwise the
// start error would be an ENOENT indistinguishable from a missing binary.
func checkWorkspace(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace %s: not a directory", dir)
	}
	return nil
}

// start starts the agent in its own process group with pipes ralph owns,
// and tells AgentRun.Started its pid (which is also its group id).
//
// It does not use exec.CommandContext with Cancel and WaitDelay. Passing
// *os.File pipes (rather than io.Writers) means exec.Cmd starts no copying
// goroutines, so Wait returns as soon as the agent itself exits even if a
// grandchild still holds the pipes; ralph then stops the rest of the group
// and bounds the pipe reads itself (EnsureGone, drain). And watch knows
// which limit fired, which a Cancel func would have to be told.
func (p *agentProc) start() error {
	cmd := exec.Command(p.inv.path, p.inv.args...)
	cmd.Dir = p.run.Dir
	// Later entries win (exec.Cmd keeps the last of duplicate keys):
	// ralph's environment, the CLI's, Options.Env, then AgentRun.Env.
	cmd.Env = slices.Concat(os.Environ(), p.inv.env, p.run.Env)

	if err := p.confine(cmd); err != nil {
		return err
	}
	childEnds, err := p.openPipes(cmd)
	if err != nil {
		p.unconfine()
		return fmt.Errorf("start %s: %w", p.inv.backend, err)
	}
	p.started = time.Now()
	group, err := procgroup.Start(cmd, p.inv.grace)
	for _, f := range childEnds {
		_ = f.Close()
	}
	if err != nil {
		p.closeParentEnds()
		p.unconfine()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			e := &MissingBinaryError{Backend: p.inv.backend, Binary: p.inv.path, Install: p.inv.install, Err: err}
			e.Reason, e.Fix = missingInterpreter(p.inv.path)
			return e
		}
		if errors.Is(err, syscall.E2BIG) {
			return tooLong(p.inv.backend, cmd, err)
		}
		return fmt.Errorf("start %s: %w", p.inv.backend, err)
	}
	p.cmd, p.group = cmd, group
	p.serve()
	if p.run.Started != nil {
		p.run.Started(cmd.Process.Pid)
	}
	return nil
}

// confine makes cmd run in the invocation's sandbox, if it has one, and
// sets p.unconfine to what undoes it once the agent is gone.
func (p *agentProc) confine(cmd *exec.Cmd) error {
	p.unconfine = func() {}
	if p.inv.sandbox == nil {
		return nil
	}
	cleanup, err := p.inv.sandbox.Confine(cmd)
	if err != nil {
		return fmt.Errorf("start %s in its sandbox (%s): %w", p.inv.backend, p.inv.sandbox, err)
	}
	p.unconfine = cleanup
	return nil
}

// openPipes wires stdout, stderr and (for a prompt on stdin) stdin, and
// returns the child's ends, which the parent closes once the child has
// them. Without a prompt on stdin, cmd.Stdin stays nil: /dev/null.
func (p *agentProc) openPipes(cmd *exec.Cmd) (childEnds []*os.File, err error) {
	defer func() {
		if err != nil {
			for _, f := range childEnds {
				_ = f.Close()
			}
			p.closeParentEnds()
		}
	}()
	var outW, errW *os.File
	if p.stdoutR, outW, err = os.Pipe(); err != nil {
		return nil, err
	}
	childEnds = append(childEnds, outW)
	if p.stderrR, errW, err = os.Pipe(); err != nil {
		return childEnds, err
	}
	childEnds = append(childEnds, errW)
	cmd.Stdout, cmd.Stderr = outW, errW
	if p.inv.promptOnStdin {
		var inR *os.File
		if inR, p.stdinW, err = os.Pipe(); err != nil {
			return childEnds, err
		}
		childEnds = append(childEnds, inR)
		cmd.Stdin = inR
	}
	return childEnds, nil
}

func (p *agentProc) closeParentEnds() {
	for _, f := range []*os.File{p.stdoutR, p.stderrR, p.stdinW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// serve starts the goroutines that feed the agent its prompt, copy its
// output and parse its stdout.
func (p *agentProc) serve() {
	p.stdinDone = make(chan struct{})
	go func() {
		defer close(p.stdinDone)
		if p.stdinW != nil {
			// An agent that exits without reading makes this fail with
			// EPIPE; that is its business, not an error of the run.
			_, _ = io.WriteString(p.stdinW, p.inv.prompt)
			_ = p.stdinW.Close()
		}
	}()

	p.pipe(p.stdoutR, p.stderrR)
}

// pipe starts the goroutines that copy the agent's output into the raw log,
// the tail of stderr and the parser, which sends its result to p.parsed.
func (p *agentProc) pipe(stdout, stderr io.Reader) {
	p.feed = newFeed()
	stdoutTee := &lineTee{log: &p.raw}
	stderrTee := &lineTee{log: &p.raw}
	p.raw.open(p.run.RawOutput, p.inv.redactor, p.inv.limits.RawBytes)
	p.copiers.Add(2)
	go p.copyOutput(stdout, stdoutTee, p.feed.Write)
	go p.copyOutput(stderr, stderrTee, p.stderrTail.Write)

	p.parsed = make(chan events.AgentResult, 1)
	go func() { p.parsed <- p.parse() }()
}

// copyOutput reads one output pipe until EOF (or until it is cut off),
// recording activity for the inactivity limit and teeing into the raw log.
func (p *agentProc) copyOutput(r io.Reader, tee *lineTee, sink func([]byte) (int, error)) {
	defer p.copiers.Done()
	defer tee.flush()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.lastOutput.Store(int64(time.Since(p.started)))
			tee.add(buf[:n])
			_, _ = sink(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// parse runs the CLI's parser over stdout, its lines cut to the limit, and
// keeps the end of its final text. A parser that panics on odd input must
// not take ralph down with it; the run then fails with the panic as its
// message.
func (p *agentProc) parse() (res events.AgentResult) {
	defer p.feed.drop()
	defer func() {
		if r := recover(); r != nil {
			res.Failure = events.FailureAgent
			res.FailureMessage = fmt.Sprintf("parse %s output: panic: %v", p.inv.backend, r)
		}
	}()
	var stdout io.Reader = p.feed
	var cutter *lineCutter
	if p.inv.limits.LineBytes > 0 {
		cutter = newLineCutter(p.feed, p.inv.limits.LineBytes)
		stdout = cutter
	}
	res = p.inv.parse(stdout, p.report, parseEnv{now: time.Now, textLimit: p.inv.limits.TextBytes, activityFull: p.budget.full})
	if cutter != nil {
		if w := cutter.warning(); w != "" {
			p.report(events.Activity{Kind: events.ActivityWarning, Text: w})
		}
	}
	p.budget.finish()
	if limit := p.inv.limits.TextBytes; limit > 0 && len(res.FinalText) > limit {
		// One line of a JSON CLI's final message may be longer.
		t := textTail{limit: limit}
		t.addString(res.FinalText)
		t.warn(p.report)
		res.FinalText = t.String()
	}
	return res
}

// wait waits for the agent, enforces the limits meanwhile, clears up its
// group and pipes, and settles the result.
func (p *agentProc) wait(ctx context.Context) (events.AgentResult, error) {
	exited := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		p.watch(ctx, exited)
	}()
	waitErr := p.cmd.Wait()
	close(exited)
	<-watched

	groupErr := p.group.EnsureGone(p.run.ForceKill)
	p.drain()
	p.raw.close()
	res := <-p.parsed
	res.Duration = time.Since(p.started)
	if p.cmd.ProcessState == nil {
		return res, fmt.Errorf("wait for %s: %w", p.inv.backend, waitErr)
	}
	res.ExitCode = exitCode(p.cmd.ProcessState)

	if groupErr != nil {
		groupErr = fmt.Errorf("stop %s: %w", p.inv.backend, groupErr)
	}
	switch p.reason {
	case stopInterrupted:
		return res, errors.Join(ctx.Err(), groupErr)
	case stopForced:
		// The engine closes ForceKill after cancelling ctx; alone, it
		// still means the run did not finish.
		err := ctx.Err()
		if err == nil {
			err = fmt.Errorf("%s killed by a forced stop", p.inv.backend)
		}
		return res, errors.Join(err, groupErr)
	case stopTimeout:
		res.Failure = events.FailureTimeout
		res.FailureMessage = fmt.Sprintf("stopped by the iteration time limit (%s)", p.run.Timeout)
	case stopIdle:
		res.Failure = events.FailureIdle
		res.FailureMessage = fmt.Sprintf("stopped after no output for %s (the inactivity limit)", p.run.IdleTimeout)
	default:
		if p.inv.verdict != nil {
			p.inv.verdict(&res, res.ExitCode, p.stderrTail.String())
		}
		p.explainDenial(&res)
	}
	return res, groupErr
}

// explainDenial says so when a failed run's error text shows that the
// sandbox refused the agent something: the agent's own words rarely do.
func (p *agentProc) explainDenial(res *events.AgentResult) {
	if p.inv.sandbox == nil || !res.Failed() {
		return
	}
	if why := p.inv.sandbox.Denied(res.FailureMessage + "\n" + p.stderrTail.String()); why != "" {
		res.FailureMessage = strings.TrimSuffix(res.FailureMessage, ".") + "; " + why
	}
}

// watch stops the agent's group when the caller's context ends, or a time
// limit is reached, before the agent exits by itself: SIGTERM, then SIGKILL
// after the grace or as soon as AgentRun.ForceKill closes. It records why
// in p.reason before sending any signal.
func (p *agentProc) watch(ctx context.Context, exited <-chan struct{}) {
	var timeout, idle <-chan time.Time
	if p.run.Timeout > 0 {
		t := time.NewTimer(p.run.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var idleTimer *time.Timer
	if p.run.IdleTimeout > 0 {
		idleTimer = time.NewTimer(p.run.IdleTimeout)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	for {
		select {
		case <-exited:
			return
		case <-ctx.Done():
			p.reason = stopInterrupted
		case <-p.run.ForceKill:
			p.reason = stopForced
		case <-timeout:
			p.reason = stopTimeout
		case <-idle:
			quiet := time.Since(p.started) - time.Duration(p.lastOutput.Load())
			if quiet < p.run.IdleTimeout {
				idleTimer.Reset(p.run.IdleTimeout - quiet)
				continue
			}
			p.reason = stopIdle
		}
		p.group.Stop(exited, p.run.ForceKill)
		return
	}
}

// drain waits for the output copiers to reach EOF, which they do once every
// process holding the pipes has exited. A process that escaped the group
// could hold them forever, so after pipeGrace the reads are cut off.
func (p *agentProc) drain() {
	copied := make(chan struct{})
	go func() {
		p.copiers.Wait()
		close(copied)
	}()
	select {
	case <-copied:
	case <-time.After(pipeGrace):
		now := time.Now()
		_ = p.stdoutR.SetReadDeadline(now)
		_ = p.stderrR.SetReadDeadline(now)
		<-copied
	}
	_ = p.stdoutR.Close()
	_ = p.stderrR.Close()
	if p.stdinW != nil {
		// Unblocks a prompt write that nobody will ever read.
		_ = p.stdinW.Close()
	}
	<-p.stdinDone
	_ = p.feed.Close()
}

// exitCode is the agent's exit status, or 128+signal when a signal ended
// it, as shells report it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// tooLong explains E2BIG, "argument list too long": the prompt never
// makes it (see deliver), so what is too long is the rest of the command
// line (cli.args) or the environment the agent is given.
func tooLong(backend string, cmd *exec.Cmd, err error) error {
	argBytes, longest := 0, 0
	for _, a := range cmd.Args {
		argBytes += len(a) + 1
		longest = max(longest, len(a))
	}
	envBytes := 0
	for _, kv := range cmd.Env {
		envBytes += len(kv) + 1
	}
	return &SetupError{
		Err: fmt.Errorf("start %s: %w", backend, err),
		Problem: fmt.Sprintf("%s cannot start: its command line (%d bytes, the longest argument %d) and environment (%d bytes) are more than the system allows (argument list too long)",
			backend, argBytes, longest, envBytes),
		Fix: "shorten cli.args, cli.env or the environment ralph runs in (Linux allows 128 KiB for one argument)",
	}
}
