// Command ralph runs a coding agent in a loop until a task is verifiably
// done. This package is the command line: one file per command, and the only
// place where concrete backends, hats and the engine are wired together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"slices"

	"github.com/alecthomas/kong"

	"github.com/ralph-loop/ralph/internal/completion"
	"github.com/ralph-loop/ralph/internal/interrupt"
	"github.com/ralph-loop/ralph/internal/sandbox"
)

// version is a release's, set at build time with -ldflags
// "-X main.version=…"; without it ralph takes the version Go recorded
// (buildVersion).
var version = "dev"

func main() {
	launchIfAsked()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// launchIfAsked hands a ralph re-executed as the Landlock launcher to the
// sandbox, which confines the process and execs the agent before anything
// of ralph's runs; it returns only in any other ralph.
func launchIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		sandbox.Launch(os.Args[2:])
	}
}

// globals are the flags every command shares, and what main hands to them.
type globals struct {
	Dir   string `short:"C" placeholder:"DIR" help:"Run as if ralph was started in DIR (the workspace)." type:"path"`
	Debug bool   `help:"Log ralph's own decisions to stderr."`
	// dirGiven says -C/--dir was given rather than taken from the current
	// directory: a worker keeps its checkouts there.
	dirGiven bool
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	signals  *interrupt.Handler
}

type cli struct {
	globals

	Loop      loopCmd         `cmd:"" aliases:"run" help:"Run the agent in a loop until the objective is done."`
	Emit      emitCmd         `cmd:"" help:"Publish an event to the running loop's event log."`
	Wave      waveCmd         `cmd:"" help:"Publish a wave: one event per payload, handled in parallel by a hat with concurrency."`
	Ask       askCmd          `cmd:"" help:"Ask a person a question: once this iteration ends the run waits for the answer (ralph answer), which reaches the asking hat next."`
	Answer    answerCmd       `cmd:"" help:"Answer the question a run waits on (ralph status shows it): ralph answer [ID] TEXT."`
	Guide     guideCmd        `cmd:"" help:"Steer the running loop: its next iteration's prompt carries a person's guidance (human.guidance)."`
	Events    eventsCmd       `cmd:"" help:"List the events of the current or an earlier run."`
	Inspect   inspectCmd      `cmd:"" help:"Show what an iteration's agent was told (its prompt), said and did, and changed (its diff)."`
	Stats     statsCmd        `cmd:"" help:"Add up this workspace's runs per config and per hat: how they ended, iterations, time, tokens, cost."`
	Runs      runsCmd         `cmd:"" help:"List this workspace's runs (how each ended, its age, its size on disk) and remove old ones."`
	Validate  validateCmd     `cmd:"" help:"Check a ralph.yml and report every problem."`
	Hats      hatsCmd         `cmd:"" help:"List, show and graph the hats and their hand-offs."`
	Config    configCmd       `cmd:"" help:"Show the merged configuration and where each value came from."`
	Init      initCmd         `cmd:"" help:"Write a ralph.yml from a preset, and a PROMPT.md for the task."`
	Schema    schemaCmd       `cmd:"" help:"Print the JSON Schema of ralph.yml, for editors, or of the --headless stream, for programs."`
	Complete  completeCmd     `cmd:"" name:"completion" help:"Print shell completions for bash, zsh or fish."`
	Status    statusCmd       `cmd:"" help:"Say whether a loop is running here and how the last run went."`
	Stop      stopCmd         `cmd:"" help:"Ask the running loop to stop."`
	Watch     watchCmd        `cmd:"" help:"Watch what runs here, full-screen: the loop or the autopilot and its slots; pause, resume, stop."`
	Serve     serveCmd        `cmd:"" help:"Serve this workspace over HTTP: a JSON API and a live web page (the loop or the autopilot's slots)."`
	Chain     chainCmd        `cmd:"" help:"Run loops one after another (presets or configs), each step's objective carrying what the step before handed off, within one budget."`
	Autopilot autopilotCmd    `cmd:"" help:"Work through a task tracker: a loop per task in its own worktree, merged when verified."`
	Worktree  worktreeCmd     `cmd:"" aliases:"worktrees" help:"List, diff and clean the worktrees ralph made: ralph loop --worktree's and the autopilot's tasks'."`
	Worker    workerCmd       `cmd:"" help:"Run an autopilot coordinator's tasks on this machine, taken over NATS JetStream."`
	Cluster   clusterCmd      `cmd:"" help:"Make and show the signing keys of an autopilot's coordinator and workers."`
	MCP       mcpCmd          `cmd:"" name:"mcp" help:"Serve ralph's tools (status, events, emit, ask, answer, guide, stop, pause, resume) to an agent or editor over MCP on stdio."`
	Memory    memoryCmd       `cmd:"" help:"Add, list, search and remove long-term memories."`
	Doctor    doctorCmd       `cmd:"" help:"List the agent CLIs: installed or not, version, likely auth; check the configured one."`
	Pricing   pricingCmd      `cmd:"" help:"Print what each model's tokens cost, the table ralph prices an agent's usage by."`
	Version   versionCmd      `cmd:"" help:"Print ralph's version."`
	Caps      capabilitiesCmd `cmd:"" name:"capabilities" help:"Describe this ralph for programs: commands, flags, JSON outputs, what changes state, exit codes, environment."`
}

// exitRequest carries kong's exit status (after --help) out of kong.Parse.
type exitRequest struct{ code int }

// run is main without os.Exit, so tests can call it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	sig := interrupt.Listen()
	defer sig.Stop()
	c := cli{globals: globals{stdin: stdin, stdout: stdout, stderr: stderr, signals: sig}}
	parser, err := newParser(&c, stdout, stderr)
	if err != nil {
		return reportError(stderr, err)
	}
	defer func() {
		if r := recover(); r != nil {
			req, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			code = req.code
		}
	}()
	if completion.Requested() {
		// The shell runs ralph to complete a line (ralph completion):
		// what it prints are the words, and nothing runs.
		return reportError(stderr, completion.Complete(stdout, parser, completionOptions))
	}
	kctx, err := parser.Parse(args)
	for err != nil {
		// kong reads "--max-iterations -1" as a flag without its value
		// and a short flag -1; given as one, the flag's own check says
		// which values it takes.
		joined, ok := joinNegativeValue(args, err)
		if !ok {
			return usageError(stderr, parser, kctx, err)
		}
		args, c = joined, cli{globals: globals{stdin: stdin, stdout: stdout, stderr: stderr, signals: sig}}
		if parser, err = newParser(&c, stdout, stderr); err != nil {
			return reportError(stderr, err)
		}
		kctx, err = parser.Parse(args)
	}
	if c.dirGiven = c.Dir != ""; !c.dirGiven {
		if c.Dir, err = os.Getwd(); err != nil {
			return reportError(stderr, err)
		}
	} else if err := checkWorkspaceDir(c.Dir, kctx); err != nil {
		return reportError(stderr, err)
	}
	logger := newLogger(stderr, c.Debug)
	kctx.BindTo(sig.Context(), (*context.Context)(nil))
	err = kctx.Run(&c.globals, logger)
	seams.exited()
	return reportError(stderr, err)
}

// newParser is ralph's command line as kong models it, writing help and
// usage mistakes to stdout and stderr. The tests and the generator of
// docs/cli.md read the same model.
func newParser(c *cli, stdout, stderr io.Writer) (*kong.Kong, error) {
	return kong.New(c,
		kong.Name("ralph"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitRequest{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, Summary: true}),
		kong.Help(usagePrinter),
	)
}

// description is what ralph is, in a sentence: the first line of its help.
const description = "ralph runs a coding agent in a loop until a task is verifiably done."

func newLogger(w io.Writer, debug bool) *slog.Logger {
	level := slog.LevelWarn
	if debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// shortFlagValue is kong's error for a flag whose value looks like a short
// flag: a negative number.
var shortFlagValue = regexp.MustCompile(`^(--[\w-]+): expected .* but got "(-[0-9][0-9.]*)" \(short flag\)`)

// joinNegativeValue gives the flag that err says lacks its value (a
// negative number kong took for a short flag) that value as --flag=-N, and
// reports whether it found them.
func joinNegativeValue(args []string, err error) ([]string, bool) {
	m := shortFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, false
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == m[1] && args[i+1] == m[2] {
			return slices.Concat(args[:i], []string{m[1] + "=" + m[2]}, args[i+2:]), true
		}
	}
	return nil, false
}

// checkWorkspaceDir says what is wrong with -C DIR, which must be a
// directory that exists: it is the workspace, not a place ralph makes.
func checkWorkspaceDir(dir string, kctx *kong.Context) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		return withHint(fmt.Errorf("-C/--dir %s is not a directory", dir), "give the workspace's directory")
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("-C/--dir: %w", err)
	}
	fix := "-C names the workspace ralph runs in, which must exist; create it first or give another"
	if kctx.Command() == "worker" {
		fix = "ralph worker makes the directory of its checkouts itself: give it as --checkouts " + dir
	}
	return withHint(fmt.Errorf("-C/--dir %s: no such directory", dir), fix)
}
