package main

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/hooks"
	"github.com/ralph-loop/ralph/pricing"
	"github.com/ralph-loop/ralph/runfiles"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/hats"
	workspacegit "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/view"
)

// The concrete backend must satisfy what the engine asks of one.
var _ engine.Backend = (*backends.Backend)(nil)

// engineOptions loads the config, decides the run's mode and turns the
// choices into the engine's Options, all but the reporter and the test
// hooks. It returns the warnings it printed on stderr (the config's and its
// topology's), which the headless stream repeats.
func engineOptions(g *globals, log *slog.Logger, ch runChoices) (engine.Options, []string, error) {
	cfg, path, cfgErr := loadConfigWith(g.Dir, ch.configs, ch.hats, ch.sets)
	switch {
	case errors.Is(cfgErr, config.ErrNotFound):
		// decideMode says whether that will do; the user's config and
		// --set still apply.
		path = ""
		var err error
		if cfg, err = config.LoadOver(configOptions(ch.sets)); err != nil {
			return engine.Options{}, nil, err
		}
	case cfgErr != nil:
		return engine.Options{}, nil, cfgErr
	}
	if err := requireShell(cfg); err != nil {
		return engine.Options{}, nil, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	warnings := slices.Clone(cfg.Warnings)
	objective, source, objErr := cfg.Objective(g.Dir, ch.prompt, ch.promptFile)
	mode, err := decideMode(g.Dir, ch, cfg, cfgErr, objErr)
	if err != nil {
		return engine.Options{}, nil, err
	}
	log.Debug("run mode", "mode", mode.kind, "start", mode.start, "why", mode.why)
	el := &cfg.EventLoop
	if mode.kind == runfiles.ModeSpec {
		// The spec's boxes are the task, checking them is progress, and
		// all checked is done.
		objective, source = checklist.Objective(mode.spec), mode.spec
		el.CompletionConfirmations = 1
		el.MaxIterations = specLimitOf(ch)
	}
	if ch.maxIterations > 0 {
		el.MaxIterations = ch.maxIterations
	}
	if ch.stuckThreshold != nil {
		el.StuckThreshold = *ch.stuckThreshold
	}
	maxRuntime := seconds(el.MaxRuntimeSeconds)
	if ch.maxRuntime != nil {
		maxRuntime = *ch.maxRuntime
	}
	reg, err := cfg.Registry(path)
	if err != nil {
		return engine.Options{}, nil, err
	}
	if errs := cfg.CriteriaProblems(g.Dir); len(errs) > 0 {
		return engine.Options{}, nil, &config.Error{Problems: errs}
	}
	if mode.kind != runfiles.ModeSpec {
		warnings = append(warnings, warnTopology(g, cfg, reg, path)...)
	}
	redactor := newRedactor(g, cfg)
	ralphBin, err := ralphBinary()
	if err != nil {
		return engine.Options{}, nil, err
	}
	pin, err := gitPin()
	if err != nil {
		return engine.Options{}, nil, err
	}
	if pin.IsZero() {
		pin = ch.pin
	}
	conf := &confiner{launcher: ralphBin, stderr: g.stderr, pin: pin}
	cfg.CLI = overrideAgent(cfg.CLI, ch.backend, ch.model)
	set, err := newBackends(cfg, redactor, conf)
	if err != nil {
		return engine.Options{}, nil, err
	}
	warnings = append(warnings, conf.warnings...)
	return engine.Options{
		Workspace: g.Dir,
		StateDir:  ch.stateDir.Path(),
		Objective: objective,
		Source:    source,
		Config:    path,
		Settings: engine.Settings{
			CompletionTopic:        el.CompletionPromise,
			StartingEvent:          el.StartingEvent,
			CancellationTopic:      el.CancellationPromise,
			RequiredEvents:         el.RequiredEvents,
			MaxIterations:          el.MaxIterations,
			MaxRuntime:             maxRuntime,
			MaxCostUSD:             el.MaxCostUSD,
			MaxTokens:              int64(el.MaxTokens),
			MaxConsecutiveFailures: el.MaxConsecutiveFailures,
			Cooldown:               seconds(el.CooldownDelaySeconds),
			EnforceHatScope:        el.EnforceHatScope,
			Confirmations:          el.CompletionConfirmations,
			IterationTimeout:       seconds(el.IterationTimeoutSeconds),
			IdleTimeout:            seconds(el.IdleTimeoutSeconds),
			RateLimitMaxWait:       seconds(el.RateLimitMaxWaitSeconds),
			Pacing:                 pacing(*el),
			AcceptanceCriteria:     cfg.AcceptanceCriteria,
			VerifyEveryIteration:   el.VerifyEveryIteration,
			Gates:                  gates(cfg),
			StuckThreshold:         el.StuckThreshold,
			MemoriesBudget:         memoriesBudget(cfg.Memories),
			ShareMemories:          cfg.Memories.Shared,
			Human:                  engine.HumanSettings{Timeout: seconds(cfg.Human.TimeoutSeconds), OnTimeout: cfg.Human.OnTimeout},
			SpecFile:               mode.spec,
		},
		Repo:         workspacegit.NewPinnedWorkspace(workspacegit.Repo{Dir: g.Dir, Pin: pin}),
		GitPin:       pin,
		CheckSandbox: set.agents.checks(g.Dir),
		Hats:         reg,
		Backend:      set.backend,
		PerHat:       set.perHat,
		Fallback:     set.fallback,
		Prices:       pricing.Default().With(cfg.Pricing),
		RalphBin:     ralphBin,
		AgentEnv:     agentEnv(ralphBin, cfg.Redact),
		Redactor:     redactor,
		Hooks:        hooks.ForLoop(cfg, g.Dir, runfiles.Answer),
		Logger:       log,
		SummaryFile:  view.SummaryMarkdown,
		KillGrace:    seconds(el.KillGraceSeconds),
		Launch:       ch.launch(g.Dir, mode, el.MaxIterations),
		Start:        mode.start,
		Wait:         ch.wait,
		ForceKill:    g.signals.Force(),
	}, warnings, nil
}

// warnTopology prints what ralph validate finds wrong with the hats'
// hand-offs, as warnings, and returns them: a run may still be what the
// user wants, but a hat nothing reaches is better known before the run
// spends money.
func warnTopology(g *globals, cfg *config.Config, reg *hats.Registry, path string) []string {
	errs, warnings := cfg.TopologyProblems(reg, path)
	var msgs []string
	for _, p := range append(errs, warnings...) {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", p.String())
		msgs = append(msgs, p.String())
	}
	return msgs
}

// backendSet is every backend a run may use: the default (cli:, as
// --backend and --model changed it), each hat's own, and the rest of each chain (cli.fallback, a hat's
// backend fallback:), keyed as engine.Options.Fallback is.
type backendSet struct {
	backend  *backends.Backend
	perHat   map[string]engine.Backend
	fallback map[string]engine.Fallback
	agents   agentSandboxes
}

// newBackends makes the default backend (cli:, as --backend and --model
// changed it: overrideAgent) and each hat's own, with their fallback
// chains, and says how each hat's agent is confined (the default
// backend's under "").
//
// conf confines the agents as the config's sandbox sections say; nil runs
// them unconfined (ralph validate, which judges the config, not the machine).
func newBackends(cfg *config.Config, redactor *redact.Redactor, conf *confiner) (backendSet, error) {
	grace := time.Duration(cfg.EventLoop.KillGraceSeconds) * time.Second
	limits := outputLimits(cfg.EventLoop)
	opts := backendOptions(cfg.CLI, grace)
	chain := cfg.CLI
	opts.Redactor, opts.Limits = redactor, limits
	opts.DisallowedTools = cfg.CLI.DisallowedTools
	var err error
	set := backendSet{perHat: map[string]engine.Backend{}, fallback: map[string]engine.Fallback{}, agents: agentSandboxes{}}
	if opts.Sandbox, err = conf.agent(cfg.LoopSandbox()); err != nil {
		return backendSet{}, err
	}
	set.agents[""] = opts.Sandbox
	var fb engine.Fallback
	if set.backend, fb, err = newChain(opts, chain, cfg.CLI); err != nil {
		return backendSet{}, err
	}
	if len(fb.Backends) > 0 {
		set.fallback[""] = fb
	}
	for _, h := range cfg.Hats {
		if h.Backend == nil && h.Sandbox == nil && len(h.DisallowedTools) == 0 {
			continue
		}
		hopts, hchain := opts, chain
		if h.Backend != nil {
			hopts, hchain = backendOptions(*h.Backend, grace), *h.Backend
			hopts.Redactor, hopts.Limits = redactor, limits
		}
		hopts.DisallowedTools = cfg.DisallowedTools(h)
		if hopts.Sandbox, err = conf.agent(cfg.HatSandbox(h)); err != nil {
			return backendSet{}, fmt.Errorf("hat %s: %w", h.ID, err)
		}
		set.agents[h.ID] = hopts.Sandbox
		hb, hfb, err := newChain(hopts, hchain, cfg.CLI)
		if err != nil {
			return backendSet{}, fmt.Errorf("hat %s: %w", h.ID, err)
		}
		set.perHat[h.ID] = hb
		if len(hfb.Backends) > 0 {
			set.fallback[h.ID] = hfb
		}
	}
	return set, nil
}

// newChain makes the backend head describes and the rest of its chain
// (chain.Fallback), each entry with head's sandbox, limits, redaction and
// denied tools: a fallback must not give back what the head took away.
// A chain may run as long as one of its CLIs is installed: a missing one
// is skipped when its turn comes (engine: backend.switched, unavailable).
// With no chain, or none installed, the head's binary must be there, as
// before chains.
func newChain(head backends.Options, chain, top config.CLI) (*backends.Backend, engine.Fallback, error) {
	if len(chain.Fallback) == 0 {
		b, err := backends.NewChecked(head)
		return b, engine.Fallback{}, err
	}
	b, err := backends.New(head)
	if err != nil {
		return nil, engine.Fallback{}, backends.NewSetupError(err, "set cli.backend in ralph.yml or pass --backend; `ralph doctor` lists what is installed")
	}
	fb := engine.Fallback{After: chain.FallbackAfter(top)}
	installed := b.Check() == nil
	for _, c := range chain.Fallback {
		opts := backendOptions(c, head.KillGrace)
		opts.Redactor, opts.Limits, opts.Sandbox = head.Redactor, head.Limits, head.Sandbox
		opts.DisallowedTools = head.DisallowedTools
		fbk, err := backends.New(opts)
		if err != nil {
			return nil, engine.Fallback{}, backends.NewSetupError(err, "fix the entry of fallback; `ralph doctor` lists what is installed")
		}
		installed = installed || fbk.Check() == nil
		fb.Backends = append(fb.Backends, fbk)
	}
	if !installed {
		_, err := backends.NewChecked(head) // says what to install
		return nil, engine.Fallback{}, err
	}
	return b, fb, nil
}

// overrideAgent is cli: as `ralph loop --backend` and --model change it
// (the autopilot's way to run a task with the agent it names). Another
// backend is that CLI bare: cli:'s command, args, env, model and fallback
// chain were written for the one it names. The same backend keeps them. A model
// replaces the model. Hats with a backend: of their own keep it: a hat's
// agent is a choice made for its role, and a model is one CLI's name. The
// tools cli: denies stay denied whatever the CLI (backends.New refuses one
// without a deny list).
func overrideAgent(c config.CLI, backend, model string) config.CLI {
	if backend != "" && backend != c.Backend {
		c = config.CLI{Backend: backend, DisallowedTools: c.DisallowedTools}
	}
	if model != "" {
		c.Model = model
	}
	return c
}

// costLimitWarnings are engine.CostLimitWarnings for the backends cfg
// names, their fallbacks included, for `ralph validate` (a backend that cannot be made is validate's
// own problem to report, not this check's).
func costLimitWarnings(cfg *config.Config) []string {
	var all []engine.Backend
	for _, h := range append([]config.Hat{{Backend: &cfg.CLI}}, cfg.Hats...) {
		head := *cmp.Or(h.Backend, &cfg.CLI)
		for _, c := range append([]config.CLI{head}, head.Fallback...) {
			if b, err := backends.New(backendOptions(c, 0)); err == nil {
				all = append(all, b)
			}
		}
	}
	prices := pricing.Default().With(cfg.Pricing)
	return append(engine.CostLimitWarnings(cfg.EventLoop.MaxCostUSD, prices, all...),
		engine.PacingWarnings(pacing(cfg.EventLoop), prices, all...)...)
}

// pacing are the event_loop's pacing budgets.
func pacing(el config.EventLoop) engine.Pacing {
	return engine.Pacing{TokensPerHour: el.TokensPerHour, TokensPerDay: el.TokensPerDay, CostPerHour: el.CostPerHour, CostPerDay: el.CostPerDay}
}

// outputLimits are the event_loop's bounds on what is kept of an agent's
// output, where 0 is no limit (backends' -1).
func outputLimits(el config.EventLoop) backends.OutputLimits {
	orNone := func(v int64) int64 {
		if v == 0 {
			return -1
		}
		return v
	}
	return backends.OutputLimits{
		LineBytes:     int(orNone(int64(el.MaxOutputLineBytes))),
		TextBytes:     int(orNone(int64(el.MaxOutputTextBytes))),
		ActivityBytes: int(orNone(int64(el.MaxActivityBytes))),
		RawBytes:      orNone(el.MaxRawOutputBytes),
	}
}

func backendOptions(c config.CLI, grace time.Duration) backends.Options {
	return backends.Options{Name: c.Backend, Command: c.Command, Args: c.Args, Model: c.Model,
		PromptMode: c.PromptMode, PromptFlag: c.PromptFlag, Env: c.Env, KillGrace: grace}
}

// ralphBinary is the absolute path of this executable, which agents call
// for `ralph emit`.
func ralphBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the ralph binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return exe, nil
}

// agentEnv is added to every agent's environment: ralph first on PATH, and
// the names under redact: for `ralph emit`, which redacts with the
// environment it runs in.
func agentEnv(ralphBin string, redactNames []string) []string {
	path := "PATH=" + filepath.Dir(ralphBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append([]string{path}, redact.NamesEnv(redactNames)...)
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// gates lists each hat's gates, then the top-level ones.
func gates(cfg *config.Config) []engine.Gate {
	var out []engine.Gate
	for _, h := range cfg.Hats {
		for _, g := range h.Gates {
			out = append(out, engine.Gate{Hat: h.ID, Topic: g.Topic, Criteria: g.Criteria, Evidence: g.Evidence})
		}
	}
	for _, g := range cfg.Gates {
		out = append(out, engine.Gate{Topic: g.Topic, Criteria: g.Criteria, Evidence: g.Evidence})
	}
	return out
}

func memoriesBudget(m config.Memories) int {
	if !m.Enabled {
		return 0
	}
	return m.Budget
}
