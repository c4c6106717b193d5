package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	workspacegit "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
	"github.com/ralph-loop/ralph/view"
)

type loopCmd struct {
	Config         []string                `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge: later files win."`
	Hats           string                  `short:"H" placeholder:"FILE|NAME" help:"Hat collection laid over the config: a preset name (ralph init --list) or a file with hats: and optionally event_loop:."`
	Set            []string                `placeholder:"KEY=VALUE" help:"Set a config key over the files, e.g. --set event_loop.max_iterations=5 or --set 'cli.args=[--verbose]' (YAML value). Repeatable; checked like the file. A resume keeps the run's and lays its own over them."`
	Prompt         string                  `short:"p" placeholder:"TEXT" xor:"objective" help:"The objective, overriding event_loop.prompt."`
	PromptFile     string                  `short:"P" placeholder:"FILE" xor:"objective" help:"Read the objective from FILE."`
	Backend        string                  `placeholder:"NAME" help:"Agent backend, overriding cli.backend (claude, codex, gemini, opencode, pi, qwen, copilot, command, …)."`
	Model          string                  `placeholder:"NAME" help:"Model, overriding cli.model (with --backend: that backend's model). Hats with a backend: of their own keep theirs."`
	MaxIterations  flagvalue.AtLeastOne    `placeholder:"N" help:"Stop after N iterations, overriding event_loop.max_iterations."`
	Spec           string                  `placeholder:"FILE" help:"Work through the checkboxes of FILE (SPEC mode; SPEC.md is used by itself when the config has no hats and no objective)."`
	N              flagvalue.AtLeastOne    `short:"n" name:"n" placeholder:"N" help:"SPEC mode: run N iterations (default 1)."`
	All            bool                    `help:"SPEC mode: run until every box is checked (at most 100 iterations)."`
	MaxRuntime     flagvalue.RuntimeLimit  `placeholder:"DURATION" help:"Stop once the run has taken this long (90m, 2h30m, or seconds), overriding event_loop.max_runtime_seconds; 0 for no limit."`
	StuckThreshold flagvalue.ZeroOrMore    `placeholder:"N" help:"End as stuck after N iterations without progress (in SPEC mode: without a newly checked box); default 3, 0 turns the check off."`
	Resume         bool                    `xor:"mode" help:"Continue the run in .ralph/ where it stopped, as it was started (mode, spec, -c, -H, --set, --backend, --model, limit flags); flags given now win, so a run that hit a limit goes on with a higher one."`
	Fresh          bool                    `xor:"mode" help:"Archive an unfinished run and start a new one."`
	Wait           bool                    `help:"If another loop holds this workspace, wait for it instead of failing."`
	Worktree       flagvalue.OptionalValue `placeholder:"[NAME]" help:"Run in a git worktree and on a branch of its own (<worktrees_dir>/.loops/NAME on ralph-loop/NAME, made from HEAD when missing), beside other loops or the autopilot; NAME is made from the objective when left out. -c, -P and -H files are read from here. ralph worktrees lists and cleans them."`
	Headless       bool                    `help:"Print one JSON event per line on stdout (started, iteration, tool, commit, event, iteration_done, complete, failed, …) for programs; people get warnings and the summary on stderr."`
	Quiet          bool                    `short:"q" xor:"verbosity" help:"Do not show the agent's own text, only what ralph does."`
	Verbose        bool                    `short:"v" xor:"verbosity" help:"Also show each prompt (with --headless: the progress lines on stderr)."`
	// StateDir is how `ralph chain run` starts a step: the loop keeps its
	// files in the step's directory while its agent works here.
	StateDir string `hidden:"" placeholder:"DIR" help:"Keep the run's files in this chain step directory (.ralph/chains/<run>/step-N) instead of .ralph/."`

	// pin is where the repository of the worktree --worktree made is.
	pin workspacegit.Pin
}

func (loopCmd) Help() string {
	return `Runs the agent in a loop. Each iteration ralph picks the hat that should act
on the pending events, builds its prompt, runs the agent, reads the events it
published (ralph emit, or <event topic="…"> tags in its last message), and
decides whether to stop. The run's state lives in .ralph/; a run cut off at any
point continues with --resume, as it was started (SPEC mode and its spec, -c,
-H, --set, --backend, --model, limit flags); one that reached a limit goes on when the resume
raises it (--max-iterations, --max-runtime, --stuck-threshold, or -n in SPEC
mode), as its last message says.

Exit status: 0 completed or cancelled; 1 stopped on failure (consecutive
failures, thrashing, malformed events, stuck, ralph stop); 2 a limit reached
(iterations, runtime, cost, tokens); 3 fatal (bad config or flags, lock held,
backend missing, an autopilot running in the same checkout, which --worktree
avoids); 130 interrupted.

--worktree runs the loop in a git worktree and on a branch of its own
(<worktrees_dir>/.loops/NAME on ralph-loop/NAME, made from HEAD when missing),
with its own .ralph/, so that it runs beside a loop in the checkout or the
autopilot; -c, -P and -H files are read from where it was started. Its commits
stay on its branch for you to merge; ralph worktrees lists and cleans them.

--resume may be given whatever the run's state, e.g. by a supervisor after a
crash of its own: a run still running in another ralph is said to run (its
pid) and the resume exits 0; a run that ended and has nothing to go on with
(completed or cancelled, or ended on a limit the resume does not raise) is
said to have ended (reason, when, exit status), nothing is run or written,
and the resume exits with that run's status.

Examples:
  ralph loop                          # ./ralph.yml, objective from PROMPT.md
  ralph loop -c ralph.yml -p "Add a --json flag to the export command"
  ralph run -P task.md --backend codex --max-iterations 20
  ralph loop -H tdd -p "Add ISO week numbers"   # the tdd preset's hats
  ralph loop --set event_loop.max_iterations=5 --set 'cli.args=[--verbose]'
  ralph loop --resume                 # after Ctrl-C, a crash or a reboot
  ralph loop --resume --max-iterations 40   # after reaching the limit
  ralph loop --fresh                  # archive the unfinished run, start over
  ralph loop --worktree -p "Fix the flaky export test"   # beside another loop
  ralph loop --worktree fix-flaky-export --resume
  ralph run --headless | jq -c 'select(.event == "commit")'
  ralph run --all                     # SPEC mode: work through SPEC.md's boxes
  ralph run --spec TODO.md -n 5 --backend codex --stuck-threshold 2

On a terminal a status panel stays at the bottom of the screen (iteration,
hat, elapsed time, cost, tokens, tool counts, last commit, last event) below
the agent's text; elsewhere ralph prints plain timestamped lines. --headless
prints the JSON events described in docs/headless.md on stdout instead.`
}

// Validate rejects flags that contradict each other, before anything is
// read: kong turns the error into a usage error (exit 3).
func (c *loopCmd) Validate() error {
	var limits []string
	if c.N > 0 {
		limits = append(limits, "-n")
	}
	if c.All {
		limits = append(limits, "--all")
	}
	if c.MaxIterations > 0 {
		limits = append(limits, "--max-iterations")
	}
	if len(limits) > 1 {
		return fmt.Errorf("%s can't be used together: each sets how many iterations the run may take; give one", strings.Join(limits, " and "))
	}
	if c.Model != "" {
		if err := tasks.ValidModel(c.Model); err != nil {
			return fmt.Errorf("--model: %w", err)
		}
	}
	if c.Resume && (c.Prompt != "" || c.PromptFile != "") {
		return errors.New("--resume can't be used with -p or -P: a resumed run keeps the objective it started with; drop -p/-P, or start a new run with --fresh")
	}
	return c.checkWorktreeFlag()
}

func (c *loopCmd) Run(ctx context.Context, g *globals, log *slog.Logger) error {
	rep, log := c.reporter(g, log)
	err := c.loop(ctx, g, log, rep)
	if c.StateDir != "" {
		err = stepError(err)
	}
	if refused := chainHolding(g.Dir, err); refused != nil && c.StateDir == "" {
		rep.Close(refused)
		return refused
	}
	if holder, ok := c.runsAlready(err); ok {
		rep.Close(nil)
		fmt.Fprintf(g.stderr, "ralph: run %s is already running in this workspace (pid %d, started %s); nothing to resume\n",
			holder.RunID, holder.PID, holder.StartedAt.Local().Format(time.DateTime))
		fmt.Fprintln(g.stderr, "ralph: follow it with `ralph events -f`, see it with `ralph status`, stop it with `ralph stop`")
		return nil
	}
	rep.Close(err)
	return err
}

// stepError is err, the error of a chain's step's loop, with the hint
// that names its chain's resume where the engine's error would name the
// loop's own, which does not find a step's run.
func stepError(err error) error {
	h := view.StepHintOf(err)
	if err == nil || h == view.HintOf(err) {
		return err
	}
	return &hint.Error{Err: err, Fix: h, Code: hint.ExitCode(err)}
}

// runsAlready reports whether a resume found its run running in another
// ralph (it holds the workspace lock). That is a success: what the resume
// asks for is being done, so a supervisor that lost track of its loop may
// resume it whatever its state.
func (c *loopCmd) runsAlready(err error) (runfiles.LockInfo, bool) {
	held, ok := errors.AsType[*runfiles.LockHeldError](err)
	if !c.Resume || !ok || held.HolderGone || held.Holder.PID == 0 {
		return runfiles.LockInfo{}, false
	}
	return held.Holder, true
}

func (c *loopCmd) loop(ctx context.Context, g *globals, log *slog.Logger, rep loopReporter) error {
	if c.Worktree.Given {
		if err := c.enterWorktree(ctx, g, rep.Notice); err != nil {
			return err
		}
	}
	ch, err := c.choices(g.Dir)
	if err != nil {
		return err
	}
	opts, warnings, err := engineOptions(g, log, ch)
	if err != nil {
		return err
	}
	files := runfiles.In(g.Dir)
	if ch.stateDir != "" {
		files = ch.stateDir
	}
	opts.Reporter = seams.loopReporter(view.Tee(rep, view.NewActivityLogIn(files, time.Now, rep.Warn)))
	opts.Exclude = func() error { return autopilotHere(opts.Workspace) }
	if h := rep.headless; h != nil {
		h.Configured(warnings, opts.Settings.StuckThreshold)
	}
	opts.Fault, opts.WriteFault, opts.Now, opts.Sleep = seams.fault, seams.writeFault, seams.now, seams.sleep
	if g.signals != nil {
		g.signals.OnInterrupt(func() {
			rep.Warn("interrupted: stopping the agent (SIGTERM, then SIGKILL once kill_grace_seconds have passed); interrupt again to kill it at once")
		})
	}
	eng, err := engine.New(opts)
	if err != nil {
		return err
	}
	out, err := eng.Run(ctx)
	if err != nil {
		return err
	}
	return exitError{code: out.ExitCode}
}

// autopilotHere refuses a loop whose workspace is the checkout an
// autopilot runs in: the autopilot merges its tasks there. Its own task
// loops run in their worktrees, each with a .ralph/ of its own, where no
// autopilot runs.
func autopilotHere(workspace string) error {
	running, ok := errors.AsType[*autopilot.RunningError](autopilot.Running(workspace))
	if !ok {
		return nil
	}
	h := running.Holder
	return withHint(fmt.Errorf("an autopilot runs in this checkout (run %s, pid %d, started %s): it merges its tasks here, so a loop cannot work here beside it",
		h.RunID, h.PID, h.StartedAt.Local().Format(time.DateTime)),
		"see it with `ralph autopilot status`, stop it with `ralph autopilot stop`; or run the loop beside it in a worktree and on a branch of its own: add --worktree")
}

// loopReporter is the loop command's output: the views of the run, fed
// through one model. It lives longer than the engine: Close gets the
// command's error, so a failure before the loop starts (a bad config, a held
// lock) still reaches the headless stream, and the live view takes its
// panel down before the error is printed.
type loopReporter struct {
	view.Reporter
	close    func(err error) // nil when there is nothing to close
	headless *view.Headless  // with --headless
}

func (r loopReporter) Close(err error) {
	if r.close != nil {
		r.close(err)
	}
}

// reporter picks the output: JSON lines with --headless, the live view when
// stderr is a terminal, plain lines otherwise. The live view also gets the
// logger, so a log line cannot land in the middle of its panel.
func (c *loopCmd) reporter(g *globals, log *slog.Logger) (loopReporter, *slog.Logger) {
	opts := view.Options{Quiet: c.Quiet, Verbose: c.Verbose}
	m := view.NewModel(time.Now)
	if c.Headless {
		// stderr gets the progress lines with -v, else only the warnings,
		// a stuck run and the summary.
		var human view.Reporter = view.NewText(g.stderr, m, time.Now, opts)
		if !c.Verbose {
			human = view.Essentials(human)
		}
		h := view.NewHeadless(g.stdout, m, time.Now)
		return loopReporter{Reporter: view.Tee(m, h, human), headless: h,
			close: func(err error) { h.End(failureOf(err)) }}, log
	}
	if fd, ok := view.TerminalFd(g.stderr); ok && os.Getenv("TERM") != "dumb" {
		live := view.NewLive(g.stderr, func() int { return view.TerminalWidth(fd) }, m, time.Now, opts)
		return loopReporter{Reporter: view.Tee(m, live), close: live.Close}, newLogger(live.Screen(), g.Debug)
	}
	return loopReporter{Reporter: view.Tee(m, view.NewText(g.stderr, m, time.Now, opts))}, log
}

// failureOf is what the headless stream says of the loop command's error:
// nil when there is none, or when the loop ended on its own (exitError).
func failureOf(err error) *view.Failure {
	var quiet exitError
	if err == nil || errors.As(err, &quiet) {
		return nil
	}
	return &view.Failure{Error: err.Error(), Hint: view.HintOf(err), ExitCode: hint.ExitCode(err)}
}
