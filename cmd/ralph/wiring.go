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
	backend, perHat, agents, err := newBackends(cfg, redactor, conf)
	if err != nil {
		return engine.Options{}, nil, err
	}
	warnings = append(warnings, conf.warnings...)
	return engine.Options{
		Workspace: g.Dir,
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
		CheckSandbox: agents.checks(g.Dir),
		Hats:         reg,
		Backend:      backend,
		PerHat:       perHat,
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

// newBackends makes the default backend (cli:, as --backend and --model
// changed it) and each hat's own, and says how each hat's agent is
// confined (the default backend's under "").
//
// conf confines the agents as the config's sandbox sections say; nil runs
// them unconfined (ralph validate, which judges the config, not the machine).
func newBackends(cfg *config.Config, redactor *redact.Redactor, conf *confiner) (*backends.Backend, map[string]engine.Backend, agentSandboxes, error) {
	grace := time.Duration(cfg.EventLoop.KillGraceSeconds) * time.Second
	limits := outputLimits(cfg.EventLoop)
	opts := backendOptions(cfg.CLI, grace)
	opts.Redactor, opts.Limits = redactor, limits
	var err error
	agents := agentSandboxes{}
	if opts.Sandbox, err = conf.agent(cfg.LoopSandbox()); err != nil {
		return nil, nil, nil, err
	}
	agents[""] = opts.Sandbox
	b, err := backends.NewChecked(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	perHat := map[string]engine.Backend{}
	for _, h := range cfg.Hats {
		if h.Backend == nil && h.Sandbox == nil {
			continue
		}
		hopts := opts
		if h.Backend != nil {
			hopts = backendOptions(*h.Backend, grace)
			hopts.Redactor, hopts.Limits = redactor, limits
		}
		if hopts.Sandbox, err = conf.agent(cfg.HatSandbox(h)); err != nil {
			return nil, nil, nil, fmt.Errorf("hat %s: %w", h.ID, err)
		}
		agents[h.ID] = hopts.Sandbox
		hb, err := backends.NewChecked(hopts)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("hat %s: %w", h.ID, err)
		}
		perHat[h.ID] = hb
	}
	return b, perHat, agents, nil
}

// overrideAgent is cli: as `ralph loop --backend` and --model change it
// (the autopilot's way to run a task with the agent it names). Another
// backend is that CLI bare: cli:'s command, args, env and model were
// written for the one it names. The same backend keeps them. A model
// replaces the model. Hats with a backend: of their own keep it: a hat's
// agent is a choice made for its role, and a model is one CLI's name.
func overrideAgent(c config.CLI, backend, model string) config.CLI {
	if backend != "" && backend != c.Backend {
		c = config.CLI{Backend: backend}
	}
	if model != "" {
		c.Model = model
	}
	return c
}

// costLimitWarnings are engine.CostLimitWarnings for the backends cfg
// names, for `ralph validate` (a backend that cannot be made is validate's
// own problem to report, not this check's).
func costLimitWarnings(cfg *config.Config) []string {
	var all []engine.Backend
	for _, h := range append([]config.Hat{{Backend: &cfg.CLI}}, cfg.Hats...) {
		if b, err := backends.New(backendOptions(*cmp.Or(h.Backend, &cfg.CLI), 0)); err == nil {
			all = append(all, b)
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
