package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/linelog"
	"github.com/ralph-loop/ralph/runfiles"

	"github.com/ralph-loop/ralph/hooks"
	"github.com/ralph-loop/ralph/view/api"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/github"
	"github.com/ralph-loop/ralph/internal/forge/gitlab"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/tasks"
	"github.com/ralph-loop/ralph/view"
)

type autopilotCmd struct {
	Run    autopilotRunCmd    `cmd:"" default:"withargs" help:"Work through the task tracker (the default: ralph autopilot [flags])."`
	Status autopilotStatusCmd `cmd:"" help:"Say whether an autopilot runs here, its slots, merges and counts."`
	Pause  autopilotPauseCmd  `cmd:"" help:"Start no new tasks; running ones go on."`
	Resume autopilotResumeCmd `cmd:"" help:"Start new tasks again after a pause."`
	Stop   autopilotStopCmd   `cmd:"" help:"Start no new tasks; running ones finish and merge, then the autopilot exits."`
}

func (autopilotCmd) Help() string {
	return `Takes ready tasks from a tracker (tk, beads, a prd.json, a markdown checklist,
or shell commands) in priority order, runs a full ralph loop for each in its own
git worktree on branch ralph/<task>, up to --parallel at once, merges finished
work onto the base branch through a queue that verifies each merged result,
closes the task, removes its worktree, and goes on until nothing is ready.
With autopilot.deliver: push each verified merge is also pushed to a remote
(never over somebody's push); with pr it goes there as ralph/<task> and a pull
request, followed until a person merges it, and the base branch here stays.

Exit status: 0 when every started task completed, 1 when any failed, 3 when
the autopilot could not run, 130 when interrupted (run it again to go on).
Started while an autopilot already runs in the repository, it says which run
(id, pid) and exits 0, so a supervisor may start it again and again. It
refuses (exit 3) to start beside a ralph loop that runs in the same checkout,
and such a loop refuses to start beside it; each task's loop runs in its own
worktree, with its own .ralph/, and is not affected.

Examples:
  ralph autopilot --source tk --parallel 3
  ralph autopilot --dry-run
  ralph autopilot status
  ralph autopilot stop --now`
}

type autopilotRunCmd struct {
	Config   []string             `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge: later files win."`
	Set      []string             `placeholder:"KEY=VALUE" help:"Set a config key over the files for the autopilot and every task's loop, e.g. --set autopilot.parallel=2 (YAML value). Repeatable; checked like the file. An unfinished run started again keeps its own and lays these over them."`
	Source   string               `placeholder:"TYPE" help:"Task source, overriding autopilot.source: tk, beads, prd, checklist or command."`
	Parallel flagvalue.AtLeastOne `placeholder:"N" help:"How many tasks run at once, overriding autopilot.parallel."`
	MaxTasks flagvalue.AtLeastOne `placeholder:"N" help:"Start at most N tasks, overriding autopilot.max_tasks."`
	DryRun   bool                 `help:"Print the plan (order, slots, held and blocked tasks) and what would stop the run from starting; change nothing."`
	Headless bool                 `help:"Print the autopilot's events as JSON lines on stdout, for programs."`
	JSON     bool                 `name:"json" help:"With --dry-run: print the plan as one JSON object (tasks in order, slots, held and blocked tasks, delivery)."`
	Quiet    bool                 `short:"q" help:"Show only task outcomes, merges and the end."`
	Cluster  string               `placeholder:"URLS" help:"Run the tasks on ralph workers through these NATS servers (nats://h1:4222,…), overriding autopilot.cluster.nats."`
	// TrustWorker adds to autopilot.cluster.trust_workers.
	TrustWorker []string `sep:"none" placeholder:"KEY|FILE" help:"A worker's public key (U…), or a file of them, whose results the coordinator takes, besides autopilot.cluster.trust_workers; repeat for more."`
}

func (autopilotRunCmd) Help() string {
	return `What ralph autopilot [flags] runs: the flags override the autopilot: section
of ralph.yml for this run. A run cut off (Ctrl-C, a crash, stop --now) goes on
when started again, with the settings it started with.

Examples:
  ralph autopilot --dry-run                 # the plan; changes nothing
  ralph autopilot --dry-run --json | jq '.tasks'  # the same, for programs
  ralph autopilot --parallel 3 --max-tasks 10
  ralph autopilot run -c ralph.yml -c ci.yml --source prd -q
  ralph autopilot --set cli.backend=codex --set event_loop.max_iterations=30
  ralph autopilot --headless | jq -c 'select(.topic == "task.failed")'`
}

func (c *autopilotRunCmd) Run(ctx context.Context, g *globals, log *slog.Logger) error {
	// An unfinished run goes on with its own --set, the new ones laid over
	// them, as a loop's resume does.
	prev, err := autopilot.UnfinishedSets(ctx, g.Dir)
	if err != nil {
		return err
	}
	if err := refuseMaskedSets(prev, c.Set, "ralph autopilot"); err != nil {
		return err
	}
	c.Set = config.LayerSets(prev, c.Set)
	cfg, configs, err := c.loadConfig(g)
	if err != nil {
		return err
	}
	if err := requireShell(cfg); err != nil {
		return err
	}
	// The loops' redactor: a tracker's stderr or a verify command's
	// output in an error is hidden as the loops hide it.
	redactor := newRedactor(g, cfg)
	if len(prev) > 0 {
		fmt.Fprintf(g.stderr, "ralph: autopilot: the unfinished run goes on with its --set %s\n", redactor.String(strings.Join(prev, " --set ")))
	}
	return redactErr(redactor, c.run(ctx, g, log, cfg, configs, redactor))
}

// openSource opens the tracker s names in dir. A forge's rate-limit waits
// are said on stderr as they begin: a run that seems to stand still says
// why and until when.
func openSource(g *globals, s config.TaskSource, dir string) (tasks.Source, error) {
	spec := autopilot.TaskSpec(s)
	spec.Wait = rateLimitWait(g, s.Type)
	return tasks.Open(spec, dir)
}

// rateLimitWait says a forge's rate-limit wait on stderr as it begins.
func rateLimitWait(g *globals, service string) forge.Waiter {
	return func(d time.Duration, why string) {
		fmt.Fprintf(g.stderr, "ralph: autopilot: %s's rate limit: waiting %s (%s)\n", service, d.Round(time.Second), why)
	}
}

// openPullRequests is where deliver: pr opens and follows its pull
// requests: the forge autopilot.pr names (or the source's), with the
// token from the environment variable it names; nil for another
// delivery.
func openPullRequests(g *globals, a config.Autopilot) (forge.PullRequests, error) {
	if a.Deliver != "pr" {
		return nil, nil
	}
	t := a.PullRequestTarget()
	token, err := forge.Token(t.Forge, t.TokenEnv)
	if err != nil {
		return nil, err
	}
	switch t.Forge {
	case "github":
		c, err := github.New(github.Options{Repo: t.Repo, APIURL: t.APIURL, Token: token, Wait: rateLimitWait(g, t.Forge)})
		if err != nil {
			return nil, err
		}
		return c.Pulls(), nil
	case "gitlab":
		c, err := gitlab.New(gitlab.Options{Project: t.Project, APIURL: t.APIURL, Token: token, Wait: rateLimitWait(g, t.Forge)})
		if err != nil {
			return nil, err
		}
		return c.Pulls(), nil
	}
	return nil, withHint(fmt.Errorf("autopilot.deliver is pr, but autopilot.pr.forge is %q", t.Forge), "set autopilot.pr.forge to github or gitlab")
}

func (c *autopilotRunCmd) run(ctx context.Context, g *globals, log *slog.Logger, cfg *config.Config, configs []string,
	redactor *redact.Redactor) error {
	settings := cfg.Autopilot
	if c.Source != "" {
		settings.Source = config.TaskSource{Type: c.Source}
	}
	if c.Parallel > 0 {
		settings.Parallel = int(c.Parallel)
	}
	if c.MaxTasks > 0 {
		settings.MaxTasks = int(c.MaxTasks)
	}
	if c.Cluster != "" {
		settings.Cluster.NATS = c.Cluster
	}
	settings.Cluster.TrustWorkers = append(settings.Cluster.TrustWorkers, c.TrustWorker...)
	source, err := openSource(g, settings.Source, g.Dir)
	if err != nil {
		if hint.Of(err) != "" {
			// A source's own fix (a forge's token to export) says more.
			return err
		}
		return withHint(err, "set autopilot.source in ralph.yml, or --source")
	}
	if c.DryRun {
		return c.dryRun(ctx, g, settings, source, configs)
	}
	if c.JSON {
		return withHint(errors.New("--json goes with --dry-run"),
			"ralph autopilot --dry-run --json prints the plan; --headless prints a run's events as JSON lines")
	}
	pulls, err := openPullRequests(g, settings)
	if err != nil {
		return err
	}
	root, base, err := autopilot.Preflight(ctx, g.Dir, settings.BaseBranch, source, configs)
	if err != nil {
		return runningAlready(g, err)
	}
	if err := autopilot.CheckDelivery(ctx, root, settings.Deliver, settings.Remote); err != nil {
		return err
	}
	settings.BaseBranch = base
	if root != g.Dir {
		if source, err = openSource(g, settings.Source, root); err != nil {
			return err
		}
	}
	if err := autopilot.CheckSource(ctx, source); err != nil {
		return err
	}
	ralphBin, err := ralphBinary()
	if err != nil {
		return err
	}
	slots, err := c.checkSandbox(g, cfg, ralphBin)
	if err != nil {
		return err
	}
	out := g.stdout
	if !c.Headless {
		out = g.stderr
	}
	fault := seams.autopilotFault(ctx)
	lines := view.NewAutopilotLines(out, c.Headless, c.Quiet)
	if len(c.Set) > 0 && settings.Cluster.NATS != "" {
		return withHint(errors.New("--set does not reach an autopilot's cluster workers"),
			"write the keys in a config file given with -c: the coordinator sends its files to the workers")
	}
	local := autopilot.LocalRunner{Ralph: ralphBin, DropEnv: seams.dropEnv, Sets: c.Set}
	runner, closeRunner, err := cluster.RunnerFor(ctx, root, settings.Cluster, local, slog.New(linelog.Redacting(log.Handler(), redactor.String, g.Debug)))
	if err != nil {
		return err
	}
	defer closeRunner()
	res, err := autopilot.Run(ctx, autopilot.Options{Repo: root, Configs: configs, Settings: settings, Sets: c.Set,
		Criteria: cfg.AcceptanceCriteria, Sandbox: cfg.SlotSandbox(), VerifySandbox: verifySandbox(slots), Source: source, Runner: runner, PullRequests: pulls, OnEvent: lines.Event, Fault: fault,
		Hooks: hooks.ForAutopilot(cfg, root), Redactor: redactor})
	if err != nil {
		if _, running := errors.AsType[*autopilot.RunningError](err); running {
			return runningAlready(g, err)
		}
		// The run's status, not that of a program (git) whose error the
		// run's wraps.
		return &hint.Error{Err: err, Fix: view.HintOf(err), Code: res.ExitCode}
	}
	log.Debug("autopilot ended", "exit", res.ExitCode, "completed", res.Completed, "failed", res.Failed)
	if res.ExitCode != exitcode.OK {
		return exitError{code: res.ExitCode}
	}
	return nil
}

// dryRun prints the plan, and then what the run would refuse to start
// for: the dry run checks the run's preconditions, so that a plan is never
// taken for a run that cannot start. A refusal ends it with the run's
// status (3); an autopilot already running here is said, and is not one.
func (c *autopilotRunCmd) dryRun(ctx context.Context, g *globals, settings config.Autopilot, source tasks.Source, configs []string) error {
	_, _, refused := autopilot.Preflight(ctx, g.Dir, settings.BaseBranch, source, configs)
	if refused == nil {
		refused = autopilot.CheckDelivery(ctx, g.Dir, settings.Deliver, settings.Remote)
	}
	plan, err := autopilot.MakePlan(ctx, source, settings.Parallel, settings.MaxTasks)
	if err != nil {
		// A source the run could not use is one of the refusals.
		return cmp.Or(refused, err)
	}
	plan.Delivery = autopilot.DeliveryOf(ctx, g.Dir, settings)
	if c.Headless || c.JSON {
		err = json.NewEncoder(g.stdout).Encode(plan)
	} else {
		view.WriteAutopilotPlan(g.stdout, plan)
	}
	if err != nil || refused == nil {
		return err
	}
	if _, running := errors.AsType[*autopilot.RunningError](refused); !running {
		fmt.Fprintln(g.stderr, "ralph: the run would not start:")
	}
	return runningAlready(g, refused)
}

// runningAlready makes a start that finds an autopilot running in the
// repository a success: the work asked for is being done. It says which
// run does it, and how to see it. Any other error is returned as it is.
func runningAlready(g *globals, err error) error {
	running, ok := errors.AsType[*autopilot.RunningError](err)
	if !ok {
		return err
	}
	h := running.Holder
	fmt.Fprintf(g.stderr, "ralph: autopilot run %s is already running here (pid %d, started %s); nothing else to start\n",
		h.RunID, h.PID, h.StartedAt.Local().Format(time.DateTime))
	fmt.Fprintln(g.stderr, "ralph: see it with `ralph autopilot status`; stop it with `ralph autopilot stop`")
	return nil
}

// loadConfig loads the config the tasks' loops will use, and returns its
// files as absolute paths, for their -c.
func (c *autopilotRunCmd) loadConfig(g *globals) (*config.Config, []string, error) {
	cfg, files, err := config.LoadFiles(g.Dir, c.Config, configOptions(c.Set))
	if errors.Is(err, config.ErrNotFound) {
		return nil, nil, withHint(err, "each task runs a full ralph loop with its hats: write a ralph.yml (ralph init) or pass -c FILE")
	}
	return cfg, files, err
}

type autopilotStatusCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file naming the task source, to count the pending tasks (default ./ralph.yml)."`
	JSON   bool     `name:"json" help:"Print the status as one JSON object."`
}

func (autopilotStatusCmd) Help() string {
	return `Reads the autopilot's files without changing them: whether it runs (its pid),
is paused or how it ended; each slot's task, hat and iteration, where it runs,
and the question its loop waits on with the command that answers it; the merge
queue; the counts and the failures.

Examples:
  ralph autopilot status
  ralph autopilot status --json | jq -r '.active[].task'`
}

func (c *autopilotStatusCmd) Run(ctx context.Context, g *globals) error {
	s, err := api.AutopilotStatus(ctx, g.Dir, c.Config, time.Now())
	if errors.Is(err, runfiles.ErrNoAutopilot) && !c.JSON {
		fmt.Fprintln(g.stdout, "no autopilot has run here; start one with `ralph autopilot`")
		return nil
	}
	if err != nil && !errors.Is(err, runfiles.ErrNoAutopilot) {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	view.WriteAutopilotStatus(g.stdout, s)
	return nil
}

type autopilotPauseCmd struct{}

func (autopilotPauseCmd) Help() string {
	return `Asks the autopilot running in this repository to start no new task; the
running ones go on, finish and merge. A paused autopilot with nothing left
running waits for ralph autopilot resume or stop.

Examples:
  ralph autopilot pause
  ralph autopilot pause && ralph autopilot status`
}

func (autopilotPauseCmd) Run(g *globals) error { return g.say(api.Pause(g.Dir)) }

type autopilotResumeCmd struct{}

func (autopilotResumeCmd) Help() string {
	return `Asks a paused autopilot to start tasks again.

Examples:
  ralph autopilot resume
  ralph autopilot resume -C ~/src/app`
}

func (autopilotResumeCmd) Run(g *globals) error { return g.say(api.Resume(g.Dir)) }

type autopilotStopCmd struct {
	Now bool `help:"Interrupt the running loops now; they stay resumable and the next ralph autopilot goes on with them."`
}

func (autopilotStopCmd) Help() string {
	return `Asks the autopilot running in this repository to start no new task and exit
once the running ones have finished and merged. With --now it interrupts the
running loops instead: they stay resumable, and the next ralph autopilot goes
on with them (exit 130).

Examples:
  ralph autopilot stop
  ralph autopilot stop --now`
}

func (c *autopilotStopCmd) Run(g *globals) error {
	req := runfiles.ControlStop
	if c.Now {
		req = runfiles.ControlStopNow
	}
	return g.say(api.RequestAutopilot(g.Dir, req))
}
