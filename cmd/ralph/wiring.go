package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/engine/config"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/redact"
)

// The concrete backend must satisfy what the engine asks of one.
var _ engine.Backend = (*backends.Backend)(nil)

// loopInputs are the command-line choices that shape a run.
type loopInputs struct {
	configs        []string
	hats           string // -H: a hat collection laid over the config
	prompt         string
	promptFile     string
	backend        string
	maxIterations  int            // 0: not given
	maxRuntime     *time.Duration // nil: not given; 0 means no limit
	stuckThreshold *int           // nil: not given; 0 turns the check off
	resume         bool
	spec           specInputs
}

// loopSetup is a loaded configuration turned into what the engine needs.
type loopSetup struct {
	cfg        *config.Config
	configPath string
	// warnings are the config's and its topology's, already printed on
	// stderr; the headless stream repeats them.
	warnings   []string
	objective  string
	source     string
	registry   *hats.Registry
	backend    *backends.Backend
	perHat     map[string]engine.Backend
	ralphBin   string
	specFile   string // SPEC mode: the checklist the run works through
	maxRuntime time.Duration
	launch     *engine.Launch // what the run records of its command line
	// redactor hides the secret values of every environment an agent of
	// this run may get, in everything ralph writes.
	redactor *redact.Redactor
}

func prepareLoop(g *globals, in loopInputs) (*loopSetup, error) {
	cfg, path, err := loadConfigOrDefault(g.Dir, in)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	s := &loopSetup{cfg: cfg, configPath: path, warnings: slices.Clone(cfg.Warnings)}
	s.objective, s.source, err = cfg.Objective(g.Dir, in.prompt, in.promptFile)
	spec, specErr := specFile(g.Dir, in, cfg, err)
	switch {
	case specErr != nil:
		return nil, specErr
	case spec != "":
		if err := s.applySpec(spec, in.spec); err != nil {
			return nil, err
		}
	case in.spec.given():
		return nil, notSpecMode(in.spec)
	case err != nil && !in.resume:
		return nil, err
	}
	if in.maxIterations > 0 {
		cfg.EventLoop.MaxIterations = in.maxIterations
	}
	if in.stuckThreshold != nil {
		cfg.EventLoop.StuckThreshold = *in.stuckThreshold
	}
	s.maxRuntime = seconds(cfg.EventLoop.MaxRuntimeSeconds)
	if in.maxRuntime != nil {
		s.maxRuntime = *in.maxRuntime
	}
	if s.registry, err = newRegistry(cfg, path); err != nil {
		return nil, err
	}
	if s.specFile == "" {
		s.warnings = append(s.warnings, warnTopology(g, cfg, s.registry, path)...)
	}
	s.redactor = newRedactor(g, cfg)
	if err := s.buildBackends(cfg, in.backend); err != nil {
		return nil, err
	}
	s.launch = in.launch(g.Dir, s)
	s.ralphBin, err = ralphBinary()
	return s, err
}

// warnTopology prints what ralph validate finds wrong with the hats'
// hand-offs, as warnings, and returns them: a run may still be what the
// user wants, but a hat nothing reaches is better known before the run
// spends money.
func warnTopology(g *globals, cfg *config.Config, reg *hats.Registry, path string) []string {
	errs, warnings := topologyProblems(cfg, reg, path)
	var msgs []string
	for _, p := range append(errs, warnings...) {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", p.String())
		msgs = append(msgs, p.String())
	}
	return msgs
}

// loadConfig loads the -c files, or ./ralph.yml when none is given.
func loadConfig(dir string, paths []string) (*config.Config, string, error) {
	if len(paths) == 0 {
		found, err := config.Find(dir)
		if err != nil {
			return nil, "", err
		}
		paths = []string{found}
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			paths[i] = filepath.Join(dir, p)
		}
	}
	cfg, err := config.Load(paths...)
	if err != nil {
		return nil, "", err
	}
	return cfg, paths[len(paths)-1], nil
}

// newRedactor hides the values of ralph's own secret-looking variables and
// of those in any backend's env:, plus the variables listed under redact:.
func newRedactor(g *globals, cfg *config.Config) *redact.Redactor {
	env := os.Environ()
	add := func(c config.CLI) {
		for name, value := range c.Env {
			env = append(env, name+"="+value)
		}
	}
	add(cfg.CLI)
	for _, h := range cfg.Hats {
		if h.Backend != nil {
			add(*h.Backend)
		}
	}
	r := redact.New(env, cfg.Redact)
	for _, name := range r.TooShort() {
		fmt.Fprintf(g.stderr, "ralph: warning: redact: %s is shorter than %d bytes, so ralph does not hide it (it would hide every occurrence of so short a string)\n",
			name, redact.MinLength)
	}
	return r
}

func (s *loopSetup) buildBackends(cfg *config.Config, override string) error {
	grace := time.Duration(cfg.EventLoop.KillGraceSeconds) * time.Second
	opts := backendOptions(cfg.CLI, grace)
	if override != "" {
		opts = backends.Options{Name: override, KillGrace: grace}
	}
	opts.Redactor = s.redactor
	b, err := newCheckedBackend(opts)
	if err != nil {
		return err
	}
	s.backend = b
	s.perHat = map[string]engine.Backend{}
	for _, h := range cfg.Hats {
		if h.Backend == nil {
			continue
		}
		hopts := backendOptions(*h.Backend, grace)
		hopts.Redactor = s.redactor
		hb, err := newCheckedBackend(hopts)
		if err != nil {
			return fmt.Errorf("hat %s: %w", h.ID, err)
		}
		s.perHat[h.ID] = hb
	}
	return nil
}

func backendOptions(c config.CLI, grace time.Duration) backends.Options {
	return backends.Options{Name: c.Backend, Command: c.Command, Args: c.Args, Model: c.Model,
		PromptMode: c.PromptMode, PromptFlag: c.PromptFlag, Env: c.Env, KillGrace: grace}
}

// newCheckedBackend makes a backend and checks its binary is there, so a
// missing agent is a fatal error before the run starts, not a failed
// iteration after it.
func newCheckedBackend(opts backends.Options) (*backends.Backend, error) {
	b, err := backends.New(opts)
	if err != nil {
		return nil, withHint(err, "set cli.backend in ralph.yml or pass --backend; `ralph doctor` lists what is installed")
	}
	if err := b.Check(); err != nil {
		var missing *backends.MissingBinaryError
		if errors.As(err, &missing) {
			return nil, withHint(missingProblem{missing}, missing.Hint())
		}
		return nil, err
	}
	return b, nil
}

// missingProblem shows only what is wrong on the error line, since the
// hint line says how to fix it.
type missingProblem struct{ *backends.MissingBinaryError }

func (m missingProblem) Error() string { return m.Problem() }
func (m missingProblem) Unwrap() error { return m.MissingBinaryError }

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

func (s *loopSetup) options(g *globals, log *slog.Logger, rep engine.Reporter, c *loopCmd) engine.Options {
	el := s.cfg.EventLoop
	return engine.Options{
		Workspace: g.Dir,
		Objective: s.objective,
		Source:    s.source,
		Config:    s.configPath,
		Settings: engine.Settings{
			CompletionTopic:        el.CompletionPromise,
			StartingEvent:          el.StartingEvent,
			CancellationTopic:      el.CancellationPromise,
			RequiredEvents:         el.RequiredEvents,
			MaxIterations:          el.MaxIterations,
			MaxRuntime:             s.maxRuntime,
			MaxCostUSD:             el.MaxCostUSD,
			MaxTokens:              int64(el.MaxTokens),
			MaxConsecutiveFailures: el.MaxConsecutiveFailures,
			Cooldown:               seconds(el.CooldownDelaySeconds),
			EnforceHatScope:        el.EnforceHatScope,
			Confirmations:          el.CompletionConfirmations,
			IterationTimeout:       seconds(el.IterationTimeoutSeconds),
			IdleTimeout:            seconds(el.IdleTimeoutSeconds),
			RateLimitMaxWait:       seconds(el.RateLimitMaxWaitSeconds),
			AcceptanceCriteria:     s.cfg.AcceptanceCriteria,
			VerifyEveryIteration:   el.VerifyEveryIteration,
			Gates:                  gates(s.cfg),
			StuckThreshold:         el.StuckThreshold,
			MemoriesBudget:         memoriesBudget(s.cfg.Memories),
			ShareMemories:          s.cfg.Memories.Shared,
			SpecFile:               s.specFile,
		},
		Repo:      newGitRepo(g.Dir),
		Hats:      s.registry,
		Backend:   s.backend,
		PerHat:    s.perHat,
		RalphBin:  s.ralphBin,
		AgentEnv:  s.agentEnv(),
		Redactor:  s.redactor,
		Logger:    log,
		Reporter:  rep,
		KillGrace: seconds(el.KillGraceSeconds),
		Launch:    s.launch,
		Start:     c.startMode(),
		Wait:      c.Wait,
		ForceKill: g.signals.force,
	}
}

// agentEnv is added to every agent's environment: ralph first on PATH, and
// the names under redact: for `ralph emit`, which redacts with the
// environment it runs in.
func (s *loopSetup) agentEnv() []string {
	env := []string{"PATH=" + filepath.Dir(s.ralphBin) + string(os.PathListSeparator) + os.Getenv("PATH")}
	if len(s.cfg.Redact) > 0 {
		env = append(env, redactEnv+"="+strings.Join(s.cfg.Redact, ","))
	}
	return env
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

// startMode is how the run begins: --resume, --fresh or a new run.
func (c *loopCmd) startMode() engine.StartMode {
	switch {
	case c.Resume:
		return engine.StartResume
	case c.Fresh:
		return engine.StartFresh
	}
	return engine.StartNew
}
