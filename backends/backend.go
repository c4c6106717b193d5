package backends

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/suggest"
)

// Names of backends that are not CLIs of their own.
const (
	nameAuto    = "auto"    // the first installed CLI of autoOrder
	nameCommand = "command" // any program; see command.go
	nameCustom  = "custom"  // ralph-orchestrator's name for command
)

// autoOrder is the preference of backend auto: the first of these whose
// executable is on PATH is used. Claude Code comes first because ralph's
// prompts and presets are tuned for it; the rest follow roughly by how
// complete their headless output is.
var autoOrder = []string{"claude", "codex", "gemini", "opencode", "pi", "qwen", "copilot"}

// Backend runs one agent CLI. It holds no per-run state, so one Backend may
// run several agents at once (each Run starts its own process).
type Backend struct {
	spec *cliSpec
	opts Options
}

// Names returns the names of the known CLIs, sorted. New also accepts
// "custom" (an alias of "command") and "auto".
func Names() []string {
	return slices.Sorted(maps.Keys(clis))
}

// Choices are the names to offer a user choosing a backend: the known CLIs
// and auto, sorted. custom is left out: it is only command's other name.
func Choices() []string {
	return slices.Sorted(slices.Values(append(Names(), nameAuto)))
}

// New returns the backend opts.Name names. An unknown name is an
// *UnknownBackendError; "auto" with no CLI installed is a
// *MissingBinaryError. New checks no binary otherwise: see Check.
func New(opts Options) (*Backend, error) {
	if err := validate(opts); err != nil {
		return nil, err
	}
	name := strings.ToLower(strings.TrimSpace(opts.Name))
	switch name {
	case nameCustom:
		name = nameCommand
	case nameAuto:
		if opts.Command != "" {
			return nil, errors.New("backend auto cannot be combined with a command; name the backend whose binary cli.command replaces")
		}
		picked, err := pickInstalled()
		if err != nil {
			return nil, err
		}
		name = picked
	}
	spec, ok := clis[name]
	if !ok {
		known := append(Names(), nameAuto, nameCustom)
		slices.Sort(known)
		return nil, &UnknownBackendError{Name: opts.Name, Known: known, Suggestion: suggest.Closest(name, known)}
	}
	if err := checkDeny(spec, opts); err != nil {
		return nil, err
	}
	if name == nameCommand && strings.TrimSpace(opts.Command) == "" {
		return nil, errors.New("backend command needs the program to run; set cli.command")
	}
	opts.Name = name
	return &Backend{spec: spec, opts: opts}, nil
}

// NewChecked makes a backend as New does and checks its binary is there,
// so a missing agent is a fatal error before a run starts, not a failed
// iteration after it. Its errors are *SetupError.
func NewChecked(opts Options) (*Backend, error) {
	b, err := New(opts)
	if err != nil {
		return nil, NewSetupError(err, "set cli.backend in ralph.yml or pass --backend; `ralph doctor` lists what is installed")
	}
	if err := b.Check(); err != nil {
		var missing *MissingBinaryError
		if errors.As(err, &missing) {
			return nil, &SetupError{Err: err, Problem: missing.Problem(), Fix: missing.Hint()}
		}
		return nil, err
	}
	return b, nil
}

// validate checks the options that do not depend on the CLI.
func validate(opts Options) error {
	switch opts.PromptMode {
	case "", "arg", "stdin":
	default:
		return fmt.Errorf("prompt mode %q: want arg or stdin", opts.PromptMode)
	}
	if opts.KillGrace < 0 {
		return fmt.Errorf("kill grace %s: must not be negative", opts.KillGrace)
	}
	return nil
}

// pickInstalled returns the first CLI of autoOrder that is registered and
// whose binary is on PATH.
func pickInstalled() (string, error) {
	var tried []string
	for _, name := range autoOrder {
		spec, ok := clis[name]
		if !ok {
			continue
		}
		tried = append(tried, spec.binary)
		if _, err := exec.LookPath(spec.binary); err == nil {
			return name, nil
		}
	}
	return "", &MissingBinaryError{
		Backend: nameAuto,
		Binary:  strings.Join(tried, ", "),
		Install: "none of them is on PATH; install one (e.g. npm install -g @anthropic-ai/claude-code) or set cli.backend",
	}
}

// Name is the backend's CLI name; for auto, the CLI it picked.
func (b *Backend) Name() string { return b.spec.name }

// ConfiguredModel is the model the options name (cli.model, or the hat's
// backend: model), else, for a CLI whose output does not name its model,
// the default its own settings name (Codex's config.toml); "" when
// neither says.
func (b *Backend) ConfiguredModel() string {
	if b.opts.Model != "" || b.spec.defaultModel == nil {
		return b.opts.Model
	}
	return b.spec.defaultModel(newDiagEnv(DiagnoseOptions{Env: b.opts.Env}))
}

// DisallowedTools are the tools the agent's CLI is told to deny
// (Options.DisallowedTools).
func (b *Backend) DisallowedTools() []string { return b.opts.DisallowedTools }

// ReportsCost says the CLI reports what each run cost (Claude Code).
func (b *Backend) ReportsCost() bool { return b.spec.reportsCost }

// NamesModel says the CLI's output names the model each run used.
func (b *Backend) NamesModel() bool { return b.spec.namesModel }

// Check reports whether the backend's executable can be found, as a
// *MissingBinaryError if not.
func (b *Backend) Check() error {
	_, err := b.resolve()
	return err
}

// resolve finds the executable: Options.Command when set, else the CLI's
// binary on PATH. A relative path is made absolute against ralph's working
// directory, so it does not change meaning in the agent's workspace.
func (b *Backend) resolve() (string, error) {
	bin := b.opts.Command
	if bin == "" {
		bin = b.spec.binary
	}
	missing := func(err error) *MissingBinaryError {
		return &MissingBinaryError{Backend: b.spec.name, Binary: bin, Install: b.spec.install, Err: err}
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		e := missing(err)
		e.Reason, e.Fix = whyNotFound(bin, b.spec.name == nameCommand)
		return "", e
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", missing(err)
	}
	return abs, nil
}

// Run runs the agent once for run, reporting activity as it happens (report
// may be nil; it is called from one goroutine, and never after Run
// returns).
//
// Secret values (Options.Redactor) are hidden in the raw output, the
// activity and the result.
//
// It returns ctx.Err() with the partial result when ctx ended before the
// agent exited by itself; a *MissingBinaryError when the executable is
// gone; another error when the agent could not be started; and otherwise a
// nil error with the verdict in the result. See the package documentation.
func (b *Backend) Run(ctx context.Context, run events.AgentRun, report func(events.Activity)) (events.AgentResult, error) {
	path, err := b.resolve()
	if err != nil {
		return events.AgentResult{}, err
	}
	if report == nil {
		report = func(events.Activity) {}
	}
	inv, warning := b.invocation(path, run.Prompt)
	if warning != "" {
		report(events.Activity{Kind: events.ActivityWarning, Text: warning})
	}
	denyDir, args, err := newDenyFile(b.spec.denyFile, b.opts.DisallowedTools, inv.args)
	if err != nil {
		return events.AgentResult{}, fmt.Errorf("start %s: %w", b.spec.name, err)
	}
	if denyDir != "" {
		defer func() { _ = os.RemoveAll(denyDir) }()
	}
	usage, args, err := newUsageFile(b.spec.usageFile, args)
	if err != nil {
		return events.AgentResult{}, fmt.Errorf("start %s: %w", b.spec.name, err)
	}
	inv.args = args
	// The deny file is only read, and a confined agent reads all but
	// secrets: it need not write it.
	inv.sandbox = b.confinement(run, usage.dir())
	res, err := runProcess(ctx, inv, run, report)
	usage.apply(&res, report)
	return res, err
}

// invocation builds the command line and environment for one run, and
// says when the prompt could not go where it usually does (see deliver).
func (b *Backend) invocation(path, prompt string) (invocation, string) {
	d := deliver(b.spec, b.opts, prompt)
	args := b.spec.args(b.opts, d.arg, d.onStdin)
	var env []string
	if b.spec.env != nil {
		env = append(env, b.spec.env(b.opts)...)
	}
	for _, k := range slices.Sorted(maps.Keys(b.opts.Env)) {
		env = append(env, k+"="+b.opts.Env[k])
	}
	if b.spec.denyEnv != nil && len(b.opts.DisallowedTools) > 0 {
		env = append(env, b.spec.denyEnv(b.opts)...)
	}
	grace := b.opts.KillGrace
	if grace == 0 {
		grace = defaultKillGrace
	}
	return invocation{
		backend:       b.spec.name,
		path:          path,
		install:       b.spec.install,
		args:          args,
		env:           env,
		prompt:        prompt,
		promptOnStdin: d.onStdin,
		grace:         grace,
		parse:         b.spec.parse,
		verdict:       b.spec.verdict,
		redactor:      b.opts.Redactor,
		limits:        b.opts.Limits.resolved(),
	}, d.warning
}
