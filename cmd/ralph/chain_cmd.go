package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/suggest"
	"github.com/ralph-loop/ralph/runfiles"
)

type chainCmd struct {
	Run    chainRunCmd    `cmd:"" help:"Run loops one after another in this workspace, each step's objective carrying what the step before handed off."`
	Resume chainResumeCmd `cmd:"" help:"Resume the chain that was cut off, at the step where it stopped."`
	Clean  chainCleanCmd  `cmd:"" help:"Remove old chain runs that ended: each one's state and its steps' runs under .ralph/chains/<run>/."`
}

func (chainCmd) Help() string {
	return `A chain runs loops one after another in the same working tree: each step is a
whole loop (its own hats, termination and verified completion) with its files
in .ralph/chains/<run>/step-N/. A step is a preset (ralph init --list) or a
config file. The next step's objective carries the chain's objective (-p),
the previous step's completion payload and the handoff.md its agent wrote in
$RALPH_STEP_DIR. Named chains live under chains: in ralph.yml, with a budget
for the whole chain (max_steps, max_runtime_seconds, max_cost_usd,
max_tokens); each step starts with what is left.

Exit status: 0 every step completed; a step that ended without completing
stops the chain with its exit status; 2 the chain's budget is spent; 3 bad
steps or config; 130 interrupted (resume with ralph chain resume).

Examples:
  ralph chain run review,tdd -p "Review the export module, then fix what the review found"
  ralph chain run review-then-fix --dry-run     # a chain under chains: in ralph.yml
  ralph chain resume                            # after Ctrl-C, a crash or a reboot
  ralph chain clean --max-age 30d               # old chains, with their steps' runs`
}

type chainRunCmd struct {
	Steps  string   `arg:"" optional:"" placeholder:"STEP[,STEP…]|NAME" help:"Steps separated by commas (preset names or config files), or the name of a chain under chains:."`
	Config []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml): where chains: is read and what a preset step's hats are laid over."`
	Prompt string   `short:"p" placeholder:"TEXT" help:"The chain's objective, which every step's objective starts with (default: event_loop.prompt or PROMPT.md)."`
	DryRun bool     `help:"Print the plan (steps, their hats, the budget, what each objective starts from) and start nothing."`
	JSON   bool     `help:"Print the plan (with --dry-run) or the chain's end as one JSON document on stdout."`
	Resume bool     `help:"Resume the chain that was cut off instead of starting one (as ralph chain resume)."`
	Quiet  bool     `short:"q" help:"Do not show the agents' own text, only what ralph does."`
}

func (chainRunCmd) Help() string {
	return `Examples:
  ralph chain run review,tdd -p "Review the export module, then fix what the review found"
  ralph chain run review-then-fix                  # a chain under chains: in ralph.yml
  ralph chain run spec-driven,steps/docs.yml --dry-run
  ralph chain run --resume                         # after Ctrl-C, a crash or a reboot`
}

func (chainResumeCmd) Help() string {
	return `Goes on with the workspace's latest chain where it stopped: the step that was
cut off, or stopped short (ralph stop, failures in a row, a fatal error whose
cause you fixed), has its loop resumed (ralph loop --resume), the steps that
completed are not run again, and the budget counts what they spent. A chain
that ended (completed, or stopped by a step that was cancelled or stuck, or by
its budget) is not run again; its status is the exit status, unless its budget
(or a step's limit) stopped it and the resume gives a larger one: --max-steps,
--max-runtime, --max-cost-usd and --max-tokens replace those bounds of the
chain's budget (recorded in its chain.json), and the chain goes on at the step
where it stopped; --max-iterations raises that step's own max_iterations.

Examples:
  ralph chain resume
  ralph chain resume --max-cost-usd 10            # its cost budget was spent
  ralph chain resume --max-iterations 20          # its step reached max_iterations
  ralph chain resume --json | jq .steps`
}

type chainResumeCmd struct {
	JSON  bool `help:"Print the chain's end as one JSON document on stdout."`
	Quiet bool `short:"q" help:"Do not show the agents' own text, only what ralph does."`
	chainBudgetFlags
}

// chainBudgetFlags replace bounds of a chain's budget on its resume; a
// flag left out keeps the bound the chain has.
type chainBudgetFlags struct {
	MaxSteps      *int                   `name:"max-steps" placeholder:"N" help:"The chain's max_steps from now on (0: no bound)."`
	MaxRuntime    flagvalue.RuntimeLimit `name:"max-runtime" placeholder:"DURATION" help:"The chain's max_runtime_seconds from now on (90m, 2h30m, or seconds; 0: no bound)."`
	MaxCostUSD    *float64               `name:"max-cost-usd" placeholder:"USD" help:"The chain's max_cost_usd from now on (0: no bound)."`
	MaxTokens     *int64                 `name:"max-tokens" placeholder:"N" help:"The chain's max_tokens from now on (0: no bound)."`
	MaxIterations flagvalue.AtLeastOne   `name:"max-iterations" placeholder:"N" help:"Resume the step where the chain stopped with this max_iterations (its loop's own limit, not the chain's)."`
}

// given reports whether any flag was given.
func (f chainBudgetFlags) given() bool {
	return f.MaxSteps != nil || f.MaxRuntime.Value() != nil || f.MaxCostUSD != nil || f.MaxTokens != nil || f.MaxIterations > 0
}

// over is b with the bounds the flags give in place of its own.
func (f chainBudgetFlags) over(b chain.Budget) chain.Budget {
	if f.MaxSteps != nil {
		b.MaxSteps = *f.MaxSteps
	}
	if d := f.MaxRuntime.Value(); d != nil {
		b.MaxRuntime = *d
	}
	if f.MaxCostUSD != nil {
		b.MaxCostUSD = *f.MaxCostUSD
	}
	if f.MaxTokens != nil {
		b.MaxTokens = *f.MaxTokens
	}
	return b
}

func (f chainBudgetFlags) Validate() error {
	switch {
	case f.MaxSteps != nil && *f.MaxSteps < 0:
		return fmt.Errorf("--max-steps %d: give 1 or more steps, or 0 for no bound", *f.MaxSteps)
	case f.MaxCostUSD != nil && (*f.MaxCostUSD < 0 || math.IsNaN(*f.MaxCostUSD) || math.IsInf(*f.MaxCostUSD, 0)):
		return fmt.Errorf("--max-cost-usd %v: give a number of dollars above 0, or 0 for no bound", *f.MaxCostUSD)
	case f.MaxTokens != nil && *f.MaxTokens < 0:
		return fmt.Errorf("--max-tokens %d: give 1 or more tokens, or 0 for no bound", *f.MaxTokens)
	}
	return nil
}

func (c *chainRunCmd) Validate() error {
	switch {
	case c.Resume && (c.Steps != "" || c.Prompt != "" || c.DryRun):
		return errors.New("--resume goes on with the chain as it was started: drop the steps, -p and --dry-run")
	case !c.Resume && strings.TrimSpace(c.Steps) == "":
		return withHint(errors.New("no steps: a chain needs at least one"),
			"name them, e.g. ralph chain run review,tdd, or a chain under chains: in ralph.yml; ralph chain resume goes on with one cut off")
	}
	return nil
}

func (c *chainRunCmd) Run(ctx context.Context, g *globals) error {
	if c.Resume {
		return resumeChain(ctx, g, c.JSON, c.Quiet, chainBudgetFlags{})
	}
	plan, err := c.plan(g.Dir)
	if err != nil {
		return err
	}
	if c.DryRun {
		return printPlan(g.stdout, plan, c.JSON)
	}
	d := runfiles.In(g.Dir)
	lock, err := lockChain(ctx, d, "")
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	st := chain.NewState(chain.NewID(d, plan.Name, time.Now()), plan, time.Now())
	own, err := holdWorkspace(ctx, d, st.ID)
	if err != nil {
		return err
	}
	defer func() { _ = own.Release() }()
	return runChain(ctx, g, st, c.JSON, c.Quiet, 0)
}

func (c *chainResumeCmd) Run(ctx context.Context, g *globals) error {
	return resumeChain(ctx, g, c.JSON, c.Quiet, c.chainBudgetFlags)
}

func resumeChain(ctx context.Context, g *globals, asJSON, quiet bool, budget chainBudgetFlags) error {
	d := runfiles.In(g.Dir)
	lock, err := lockChain(ctx, d, "")
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	st, err := chain.Latest(d)
	if errors.Is(err, chain.ErrNoChain) {
		return withHint(fmt.Errorf("no chain to resume here: %w", err), "start one with ralph chain run STEP[,STEP…]")
	}
	if err != nil {
		return err
	}
	// A step stopped short (ralph stop, failures, a fatal error since
	// fixed) goes on as its loop's own resume would; saved as the step
	// starts.
	st.ReopenCutShort()
	if budget.given() {
		if err := rebudget(g, d, st, budget); err != nil {
			return err
		}
	}
	if st.Ended() {
		fmt.Fprintf(g.stderr, "ralph: chain %s ended already (%s, exit status %d): %s; nothing to resume\n", st.ID, st.Status, st.ExitCode, st.Message)
		return finishChain(g, st, asJSON)
	}
	own, err := holdWorkspace(ctx, d, st.ID)
	if err != nil {
		return err
	}
	defer func() { _ = own.Release() }()
	fmt.Fprintf(g.stderr, "ralph: resuming chain %s at step %d/%d (%s)\n", st.ID, st.Current, len(st.Plan.Steps), st.Plan.Steps[st.Current-1].Label())
	return runChain(ctx, g, st, asJSON, quiet, int(budget.MaxIterations))
}

// rebudget gives the chain the budget the resume's flags make of its own,
// and saves it; a chain that cannot go on keeps its own, and is refused
// with why.
func rebudget(g *globals, d runfiles.Dir, st *chain.State, flags chainBudgetFlags) error {
	was, b := st.Plan.Budget, flags.over(st.Plan.Budget)
	if !st.Rebudget(b, time.Now()) {
		return withHint(fmt.Errorf("chain %s %s (exit status %d): %s; a new budget does not change that", st.ID, st.Status, st.ExitCode, st.Message),
			"only a chain cut off, or stopped by its budget or a step's limit, goes on with a new one; start another with ralph chain run")
	}
	if err := chain.Save(d, st, time.Now()); err != nil {
		return err
	}
	if b != was {
		fmt.Fprintf(g.stderr, "ralph: chain %s's budget is now %s (was %s)\n", st.ID, b, was)
	}
	return nil
}

// lockChain takes .ralph/chains/chain.lock: one chain at a time in a
// workspace, since its steps share the working tree.
func lockChain(ctx context.Context, d runfiles.Dir, id string) (*runfiles.Lock, error) {
	host, _ := os.Hostname()
	lock, err := runfiles.AcquireLock(ctx, d.ChainLock(), runfiles.LockInfo{RunID: id, PID: os.Getpid(), Host: host, StartedAt: time.Now().UTC()}, runfiles.LockOptions{})
	if held, ok := errors.AsType[*runfiles.LockHeldError](err); ok && !held.HolderGone {
		return nil, withHint(fmt.Errorf("a chain runs in this workspace already (pid %d, started %s)", held.Holder.PID, held.Holder.StartedAt.Local().Format(time.DateTime)),
			"wait for it to end, or stop it with Ctrl-C in its terminal; its steps share the working tree with any other")
	}
	return lock, err
}

// holdWorkspace takes the workspace's own loop lock (.ralph/loop.lock) for
// the chain run id, held while the chain runs: a plain `ralph loop` and a
// chain both write the working tree, and one flock, rather than a check of
// the other's lock followed by a start, decides which runs. The chain's
// steps lock their own directories, so they are not refused.
func holdWorkspace(ctx context.Context, d runfiles.Dir, id string) (*runfiles.Lock, error) {
	host, _ := os.Hostname()
	lock, err := runfiles.AcquireLock(ctx, d.Lock(), runfiles.LockInfo{RunID: id, PID: os.Getpid(), Host: host, StartedAt: time.Now().UTC()}, runfiles.LockOptions{})
	if held, ok := errors.AsType[*runfiles.LockHeldError](err); ok && !held.HolderGone {
		return nil, withHint(fmt.Errorf("a loop runs in this workspace (pid %d, run %s, started %s), and a chain's steps would write the same working tree",
			held.Holder.PID, held.Holder.RunID, held.Holder.StartedAt.Local().Format(time.DateTime)),
			"wait for it to end (ralph status), or stop it with `ralph stop`; then start the chain")
	}
	return lock, err
}

// chainHolding is the refusal of a plain `ralph loop` whose workspace lock
// a running chain holds (holdWorkspace), naming the chain; nil when err is
// not that.
func chainHolding(dir string, err error) error {
	held, ok := errors.AsType[*runfiles.LockHeldError](err)
	if !ok || held.HolderGone || held.Holder.PID == 0 {
		return nil
	}
	d := runfiles.In(dir)
	st, lerr := chain.Load(d, held.Holder.RunID)
	if lerr != nil {
		return nil
	}
	return &hint.Error{Err: fmt.Errorf("chain %s runs in this workspace (pid %d, started %s; %s): its steps write the working tree a loop here would",
		st.ID, held.Holder.PID, held.Holder.StartedAt.Local().Format(time.DateTime), st.Where()),
		Fix: "wait for it to end (ralph status shows it), or stop it with `ralph stop` (it stops at its current step; `ralph chain resume` goes on); or run this loop in a worktree of its own: ralph loop --worktree"}
}

func runChain(ctx context.Context, g *globals, st *chain.State, asJSON, quiet bool, maxIterations int) error {
	bin, err := ralphBinary()
	if err != nil {
		return err
	}
	c := chain.Chain{Dir: runfiles.In(g.Dir), State: st, Now: time.Now,
		Runner: &childStepRunner{bin: bin, workspace: g.Dir, configs: st.Plan.Configs, quiet: quiet, stderr: g.stderr,
			resumeMaxIterations: maxIterations},
		Reporter: chainReporter{w: g.stderr}}
	if err := c.Run(ctx); err != nil {
		return err
	}
	return finishChain(g, st, asJSON)
}

// finishChain prints how the chain ended and exits with its status.
func finishChain(g *globals, st *chain.State, asJSON bool) error {
	writeChainSummary(g.stderr, st)
	if asJSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			return err
		}
	}
	if st.ExitCode != exitcode.OK {
		return exitError{code: st.ExitCode}
	}
	return nil
}

func writeChainSummary(w io.Writer, st *chain.State) {
	spent := st.Spent()
	fmt.Fprintf(w, "ralph: chain %s %s: %s\n", st.ID, st.Status, st.Message)
	for _, r := range st.Steps {
		fmt.Fprintf(w, "ralph:   step %d (%s): %s, exit status %d, %s, $%.4f, %d tokens\n",
			r.N, r.Label, r.Status, r.ExitCode, r.Spent.Runtime.Round(time.Second), r.Spent.CostUSD, r.Spent.Tokens)
	}
	for n := len(st.Steps) + 1; n <= len(st.Plan.Steps); n++ {
		fmt.Fprintf(w, "ralph:   step %d (%s): not started\n", n, st.Plan.Steps[n-1].Label())
	}
	fmt.Fprintf(w, "ralph:   spent: %d of %d steps, %s, $%.4f, %d tokens; budget: %s\n",
		spent.Steps, len(st.Plan.Steps), spent.Runtime.Round(time.Second), spent.CostUSD, spent.Tokens, st.Plan.Budget)
	if st.Status == chain.Running || st.CutShort() {
		fmt.Fprintln(w, "ralph: hint: go on with `ralph chain resume`")
	}
}

type chainReporter struct{ w io.Writer }

func (r chainReporter) StepStarting(s *chain.State, run chain.StepRun) {
	verb := "starting"
	if run.Resume {
		verb = "resuming"
	}
	fmt.Fprintf(r.w, "ralph: %s %s; its limits: %s\n", verb, s.Where(), run.Budget)
}

func (r chainReporter) StepEnded(s *chain.State, rec chain.StepRecord) {
	fmt.Fprintf(r.w, "ralph: chain %s: step %d (%s) %s, exit status %d\n", s.ID, rec.N, rec.Label, rec.Status, rec.ExitCode)
}

// plan resolves the steps (a named chain or a comma-separated list) and
// loads each step's config, so that a mistake in any step is reported
// before the first one starts.
func (c *chainRunCmd) plan(dir string) (chain.Plan, error) {
	cfg, configs, err := c.chainConfig(dir)
	if err != nil {
		return chain.Plan{}, err
	}
	steps, plan := c.stepsOf(cfg), chain.Plan{Configs: configs}
	if named, ok := namedChain(cfg, c.Steps); ok {
		steps, plan.Name = named.Steps, named.Name
		plan.Budget = chain.Budget{MaxSteps: named.Budget.MaxSteps, MaxRuntime: named.Budget.MaxRuntime(),
			MaxCostUSD: named.Budget.MaxCostUSD, MaxTokens: named.Budget.MaxTokens}
	}
	for _, s := range steps {
		step, err := resolveStep(dir, s, configs, cfg)
		if err != nil {
			return chain.Plan{}, err
		}
		plan.Steps = append(plan.Steps, step)
	}
	plan.Objective, err = chainObjective(dir, cfg, c.Prompt)
	if err == nil && plan.Objective == "" && plan.Steps[0].Prompt == "" && !plan.Steps[0].OwnObjective {
		err = withHint(errors.New("no objective for the chain's first step: no -p, and neither the chain's config nor the step's has event_loop.prompt or a PROMPT.md"),
			`pass -p TEXT, e.g. ralph chain run `+c.Steps+` -p "…"; or give the step a prompt: {preset: NAME, prompt: TEXT}`)
	}
	return plan, err
}

// chainConfig loads -c, or ./ralph.yml when there is one; nil when there
// is none, since a chain of presets needs none.
func (c *chainRunCmd) chainConfig(dir string) (*config.Config, []string, error) {
	cfg, path, err := config.LoadIn(dir, c.Config, nil, configOptions(nil))
	if errors.Is(err, config.ErrNotFound) && len(c.Config) == 0 {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	configs := c.Config
	if len(configs) == 0 {
		configs = []string{path}
	}
	return cfg, configs, nil
}

func namedChain(cfg *config.Config, arg string) (config.Chain, bool) {
	if cfg == nil || strings.Contains(arg, ",") {
		return config.Chain{}, false
	}
	return cfg.Chain(strings.TrimSpace(arg))
}

// stepsOf is the comma-separated steps of the command line.
func (c *chainRunCmd) stepsOf(cfg *config.Config) []config.ChainStep {
	var steps []config.ChainStep
	for s := range strings.SplitSeq(c.Steps, ",") {
		steps = append(steps, config.ChainStep{Name: strings.TrimSpace(s)})
	}
	return steps
}

// resolveStep makes a written step a plan's: a preset or a config file
// that exists, whose config loads, with its hats and limits.
func resolveStep(dir string, s config.ChainStep, configs []string, cfg *config.Config) (chain.Step, error) {
	step, err := resolveName(dir, s, cfg)
	if err != nil {
		return step, err
	}
	return loadStep(dir, step, configs)
}

// resolveName says what a written step names, a preset or a config file,
// and refuses one that names neither.
func resolveName(dir string, s config.ChainStep, cfg *config.Config) (chain.Step, error) {
	where := "on the command line"
	if s.File != "" {
		where = fmt.Sprintf("at %s:%d", s.File, s.Line)
	}
	step := chain.Step{Preset: s.Preset, Config: s.Config, Prompt: s.Prompt}
	switch {
	case s.Name == "" && s.Preset == "" && s.Config == "":
		return step, withHint(fmt.Errorf("an empty step %s", where), "remove the extra comma, or name a preset (ralph init --list) or a config file")
	case s.Name != "" && isConfigFile(dir, s.Name):
		step.Config = s.Name
	case s.Name != "":
		step.Preset = s.Name
	}
	if step.Preset != "" {
		if _, ok := examples.Lookup(step.Preset); !ok {
			return step, unknownStep(where, step.Preset, cfg)
		}
	} else if _, err := os.Stat(inWorkspace(dir, step.Config)); err != nil {
		return step, withHint(fmt.Errorf("step %q %s: no such config file (%s)", step.Config, where, inWorkspace(dir, step.Config)),
			"a config step's path is relative to the workspace; or name a preset: "+strings.Join(examples.Names(), ", "))
	}
	return step, nil
}

// isConfigFile says a step names a file rather than a preset: it has a
// path separator or a config file's extension, or a file of that name
// exists.
func isConfigFile(dir, name string) bool {
	if strings.ContainsAny(name, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yml", ".yaml", ".json":
		return true
	}
	_, isPreset := examples.Lookup(name)
	fi, err := os.Stat(inWorkspace(dir, name))
	return !isPreset && err == nil && fi.Mode().IsRegular()
}

func unknownStep(where, name string, cfg *config.Config) error {
	candidates := examples.Names()
	if cfg != nil {
		candidates = append(candidates, cfg.ChainNames()...)
	}
	err := fmt.Errorf("unknown step %q %s: no preset and no config file of that name", name, where)
	if s := suggest.Closest(name, candidates); s != "" {
		return withHint(fmt.Errorf("%w; did you mean %q?", err, s), "the presets: "+strings.Join(examples.Names(), ", "))
	}
	return withHint(err, "name a preset ("+strings.Join(examples.Names(), ", ")+"), a config file, or a chain under chains:")
}

// loadStep loads a step's config as its loop will: a preset laid over the
// chain's config, a config file by itself.
func loadStep(dir string, step chain.Step, configs []string) (chain.Step, error) {
	var cfg *config.Config
	var err error
	if step.Preset != "" {
		cfg, _, err = loadConfigWith(dir, configs, step.Preset, nil)
	} else {
		cfg, _, err = loadConfigWith(dir, []string{step.Config}, "", nil)
	}
	if err != nil {
		return step, fmt.Errorf("step %s: %w", step.Label(), err)
	}
	for _, h := range cfg.Hats {
		step.Hats = append(step.Hats, h.ID)
	}
	el := cfg.EventLoop
	step.CompletionTopic = el.CompletionPromise
	_, _, objErr := cfg.Objective(dir, "", "")
	step.OwnObjective = objErr == nil
	step.Limits = chain.Budget{MaxRuntime: time.Duration(el.MaxRuntimeSeconds) * time.Second, MaxCostUSD: el.MaxCostUSD, MaxTokens: el.MaxTokens}
	return step, nil
}

// chainObjective is -p, or else the chain's config's own objective; ""
// when neither is given, and each step's config then says its own.
func chainObjective(dir string, cfg *config.Config, prompt string) (string, error) {
	if prompt != "" || cfg == nil {
		return prompt, nil
	}
	text, _, err := cfg.Objective(dir, "", "")
	if err != nil {
		return "", nil //nolint:nilerr // no objective in the config: the steps' own configs say theirs
	}
	return text, nil
}

func printPlan(w io.Writer, plan chain.Plan, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(plan)
	}
	name := plan.Name
	if name == "" {
		name = "(from the command line)"
	}
	fmt.Fprintf(w, "chain %s: %d steps\n", name, len(plan.Steps))
	fmt.Fprintf(w, "budget: %s\n", plan.Budget)
	if plan.Objective != "" {
		fmt.Fprintf(w, "objective: %s\n", firstLine(plan.Objective))
	} else {
		fmt.Fprintln(w, "objective: none given; each step's config says its own")
	}
	for i, s := range plan.Steps {
		kind := "preset"
		if s.Config != "" {
			kind = "config"
		}
		fmt.Fprintf(w, "step %d: %s (%s)\n", i+1, s.Label(), kind)
		fmt.Fprintf(w, "  hats: %s\n", orNone(strings.Join(s.Hats, ", ")))
		fmt.Fprintf(w, "  completes on: %s\n", s.CompletionTopic)
		fmt.Fprintf(w, "  limits: %s\n", plan.Budget.ForStep(chain.Spent{}, s.Limits))
		var from []string
		if plan.Objective != "" {
			from = append(from, "the chain's objective")
		}
		if s.Prompt != "" {
			from = append(from, "its prompt: "+firstLine(s.Prompt))
		}
		if i > 0 {
			from = append(from, fmt.Sprintf("step %d's completion payload and handoff.md (.ralph/chains/<run>/step-%d/handoff.md)", i, i))
		}
		fmt.Fprintf(w, "  objective from: %s\n", orNone(strings.Join(from, "; ")))
	}
	fmt.Fprintln(w, "nothing started (--dry-run)")
	return nil
}

func firstLine(s string) string {
	line, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if cut {
		return line + " …"
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// chainProblems are the steps of the config's chains that name neither a
// preset nor a file, for ralph validate: what `ralph chain run NAME` would
// refuse before its first step.
func chainProblems(cfg *config.Config, dir string) []config.Problem {
	var out []config.Problem
	for _, ch := range cfg.Chains {
		for _, s := range ch.Steps {
			if _, err := resolveName(dir, s, cfg); err != nil {
				msg := strings.ReplaceAll(err.Error(), fmt.Sprintf(" at %s:%d", s.File, s.Line), "")
				out = append(out, config.Problem{File: s.File, Line: s.Line, Msg: fmt.Sprintf("chains.%s: %s", ch.Name, msg), Hint: hint.Of(err)})
			}
		}
	}
	return out
}
