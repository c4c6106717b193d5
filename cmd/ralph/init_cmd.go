package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/internal/atomicfile"
	"github.com/ralph-loop/ralph/internal/suggest"
)

type initCmd struct {
	// Preset has no default: tag, because kong counts a default as given
	// and --list would then always clash with it; Run fills it in.
	Preset  string   `placeholder:"NAME" xor:"list-preset" help:"The preset to start from (see --list); default code-assist."`
	Backend string   `placeholder:"NAME" xor:"list-backend" help:"Agent backend to write into cli.backend (claude, codex, gemini, opencode, pi, qwen, copilot, command, …); default: the preset's."`
	Command string   `placeholder:"PATH" xor:"list-command" help:"The program to write into cli.command: the agent itself with --backend command (required then), else that CLI's binary instead of the one on PATH."`
	Arg     []string `placeholder:"ARG" xor:"list-arg" help:"An argument to write into cli.args, passed before the prompt; repeat for more."`
	Force   bool     `xor:"list-force" help:"Replace an existing ralph.yml."`
	// --list writes nothing, so the flags that shape what is written
	// cannot go with it.
	List bool `xor:"list-preset,list-backend,list-command,list-arg,list-force" help:"List the presets, one line each, and write nothing."`
	JSON bool `name:"json" help:"With --list: print the presets as one JSON array of {name, description, default}."`
}

func (initCmd) Help() string {
	return `Writes ralph.yml from a preset, and PROMPT.md, where the task goes, if there
is none yet. Every preset is a complete, commented config: read it, then
adjust the hats, limits, criteria and gates to the project. An existing
ralph.yml is left alone unless --force is given (exit 3).

The default preset, code-assist, fits most changes to an existing codebase:
a planner hands out steps, a builder does them with tests, a reviewer checks
each, and a finalizer checks the whole. A preset can also be used without
writing it, as ralph loop -H NAME.

Examples:
  ralph init
  ralph init --list
  ralph init --list --json
  ralph init --preset tdd --backend codex
  ralph init --backend command --command ./agent.sh
  ralph init --backend command --command python3 --arg agent.py
  ralph init --preset review --force`
}

// presetJSON is a preset as init --list --json prints it.
type presetJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

func presetsJSON() []presetJSON {
	var out []presetJSON
	for _, p := range examples.Presets() {
		out = append(out, presetJSON{Name: p.Name, Description: p.Description, Default: p.Name == examples.DefaultPreset})
	}
	return out
}

func (c *initCmd) Run(g *globals) error {
	switch {
	case c.List && c.JSON:
		return writeJSON(g.stdout, presetsJSON())
	case c.List:
		return examples.WriteList(g.stdout)
	case c.JSON:
		return withHint(errors.New("--json goes with --list: ralph init prints nothing else"), "ralph init --list --json")
	}
	if c.Preset == "" {
		c.Preset = examples.DefaultPreset
	}
	p, err := lookupPreset(c.Preset)
	if err != nil {
		return err
	}
	if err := c.checkCLIFlags(); err != nil {
		return err
	}
	if err := c.checkExisting(g.Dir, p.Name); err != nil {
		return err
	}
	data := p.Data
	if c.Backend != "" {
		if data, err = c.presetWithCLI(data); err != nil {
			return err
		}
	}
	path := filepath.Join(g.Dir, config.DefaultPath)
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	cfg, err := config.LoadBytes(path, data)
	if err != nil {
		return err // cannot happen: the presets are tested, and presetWithCLI checked the result
	}
	fmt.Fprintf(g.stdout, "wrote %s (preset %s, backend %s)\n", path, p.Name, cfg.CLI.Backend)
	warnUnrunnable(g, cfg)
	if err := writePromptTemplate(g, cfg); err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, "next: ralph validate, ralph hats graph, then ralph loop")
	return nil
}

// lookupPreset finds a preset by name, with a did-you-mean for a typo.
func lookupPreset(name string) (examples.Preset, error) {
	p, ok := examples.Lookup(name)
	if ok {
		return p, nil
	}
	msg := fmt.Sprintf("no preset called %q", name)
	if s := suggest.Closest(name, examples.Names()); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return examples.Preset{}, withHint(errors.New(msg),
		"choose one of: "+strings.Join(examples.Names(), ", ")+" (ralph init --list says what each is for)")
}

// checkCLIFlags refuses combinations that cannot make a working cli:
// section. --command alone is ambiguous: the agent itself (backend command)
// or another binary for the preset's CLI; the user says which.
func (c *initCmd) checkCLIFlags() error {
	switch {
	case c.Backend == "" && (c.Command != "" || len(c.Arg) > 0):
		return withHint(errors.New("--command and --arg need --backend"),
			"run the program as the agent: ralph init --backend command --command "+orExample(c.Command)+
				"\nor use it as a CLI's binary: ralph init --backend claude --command /path/to/claude")
	case backends.Canonical(c.Backend) == "command" && strings.TrimSpace(c.Command) == "":
		return withHint(fmt.Errorf("--backend %s needs the program to run", c.Backend),
			"name it with --command, and its arguments with --arg: ralph init --backend command --command ./agent.sh")
	}
	return nil
}

func orExample(command string) string {
	if command == "" {
		return "./agent.sh"
	}
	return command
}

// warnUnrunnable says when the configured agent cannot run yet (a script
// not written or not executable), without refusing: ralph init may come
// first, and ralph loop checks again.
func warnUnrunnable(g *globals, cfg *config.Config) {
	if cfg.CLI.Command == "" {
		return
	}
	b, err := backends.New(backendOptions(cfg.CLI, 0))
	if err == nil {
		err = b.Check()
	}
	if err != nil {
		fmt.Fprintf(g.stderr, "ralph: warning: %v\n", err)
	}
}

// checkExisting refuses to replace a config without --force. Any config
// file Find would pick up counts, since a new ralph.yml would shadow a
// ralph.yaml or ralph.json without a word.
func (c *initCmd) checkExisting(dir, preset string) error {
	found, err := config.Find(dir)
	switch {
	case errors.Is(err, config.ErrNotFound):
		return nil
	case err != nil:
		return err
	case c.Force:
		return nil
	}
	return withHint(fmt.Errorf("%s already exists", found),
		fmt.Sprintf("pass --force to replace it, or use the preset without writing it: ralph loop -H %s", preset))
}

// writePromptTemplate writes PROMPT.md when the config reads the objective
// from a file that is not there yet.
func writePromptTemplate(g *globals, cfg *config.Config) error {
	if cfg.EventLoop.Prompt != "" || cfg.EventLoop.PromptFile == "" {
		return nil
	}
	path := cfg.EventLoop.PromptFile
	if !filepath.IsAbs(path) {
		path = filepath.Join(g.Dir, path)
	}
	wrote, err := examples.WritePromptTemplate(path)
	switch {
	case err != nil:
		return err
	case wrote:
		fmt.Fprintf(g.stdout, "wrote %s: replace its text with the task\n", path)
	default:
		fmt.Fprintf(g.stdout, "kept %s: it holds the task\n", path)
	}
	return nil
}

// presetWithCLI is the preset with the cli: values of the flags written
// into it (config.SetCLI). The result is loaded, so a backend ralph does
// not know is refused with the loader's reason.
func (c *initCmd) presetWithCLI(data []byte) ([]byte, error) {
	if !config.IsPlainWord(c.Backend) {
		return nil, withHint(fmt.Errorf("--backend %q: not a backend name", c.Backend), "use a name such as claude, codex or gemini")
	}
	out, err := config.SetCLI(data, config.CLI{Backend: c.Backend, Command: c.Command, Args: c.Arg})
	if err != nil {
		return nil, err
	}
	if _, err := config.LoadBytes(config.DefaultPath, out); err != nil {
		var cerr *config.Error
		if errors.As(err, &cerr) && len(cerr.Problems) == 1 {
			return nil, withHint(fmt.Errorf("--backend %s: %s", c.Backend, cerr.Problems[0].Msg), cerr.Problems[0].Hint)
		}
		return nil, fmt.Errorf("--backend %s: %w", c.Backend, err)
	}
	return out, nil
}
