package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/google/renameio/v2"
	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/engine/config"
	"github.com/ralph-loop/ralph/examples"
)

type initCmd struct {
	// Preset has no default: tag, because kong counts a default as given
	// and --list would then always clash with it; Run fills it in.
	Preset  string `placeholder:"NAME" xor:"list-preset" help:"The preset to start from (see --list); default code-assist."`
	Backend string `placeholder:"NAME" xor:"list-backend" help:"Agent backend to write into cli.backend (claude, codex, gemini, opencode, pi, qwen, copilot, …); default: the preset's."`
	Force   bool   `xor:"list-force" help:"Replace an existing ralph.yml."`
	// --list writes nothing, so the flags that shape what is written
	// cannot go with it.
	List bool `xor:"list-preset,list-backend,list-force" help:"List the presets, one line each, and write nothing."`
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
  ralph init --preset tdd --backend codex
  ralph init --preset review --force`
}

// promptTemplate is written to PROMPT.md when there is none: ralph gives
// the file to every hat as the objective, so it says what belongs there.
const promptTemplate = `# Task

Replace this text with what you want done: the change, where in the code it
belongs, and why. ralph gives this file to every hat as the objective.

## Done when

- the behaviour that shows it works (a test, or a command and its output)
- what must not change
`

func (c *initCmd) Run(g *globals) error {
	if c.List {
		return listPresets(g)
	}
	if c.Preset == "" {
		c.Preset = examples.DefaultPreset
	}
	p, ok := examples.Lookup(c.Preset)
	if !ok {
		return withHint(fmt.Errorf("no preset called %q", c.Preset),
			"choose one of: "+strings.Join(examples.Names(), ", ")+" (ralph init --list says what each is for)")
	}
	if err := c.checkExisting(g.Dir, p.Name); err != nil {
		return err
	}
	data := p.Data
	if c.Backend != "" {
		var err error
		if data, err = setBackend(data, c.Backend); err != nil {
			return err
		}
	}
	path := filepath.Join(g.Dir, config.DefaultPath)
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	cfg, err := config.LoadBytes(path, data)
	if err != nil {
		return err // cannot happen: the presets are tested, and setBackend checked the result
	}
	fmt.Fprintf(g.stdout, "wrote %s (preset %s, backend %s)\n", path, p.Name, cfg.CLI.Backend)
	if err := writePromptTemplate(g, cfg); err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, "next: ralph validate, ralph hats graph, then ralph loop")
	return nil
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		fmt.Fprintf(g.stdout, "kept %s: it holds the task\n", path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.WriteString(promptTemplate)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(g.stdout, "wrote %s: replace its text with the task\n", path)
	return nil
}

func listPresets(g *globals) error {
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	for _, p := range examples.Presets() {
		desc := p.Description
		if p.Name == examples.DefaultPreset {
			desc += " [default]"
		}
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, desc)
	}
	return tw.Flush()
}

// setBackend rewrites the value of cli.backend in a preset. It edits the
// bytes where the YAML node says the value is, rather than re-encoding the
// tree: yaml.v3's encoder keeps comments but drops the blank lines between
// sections and realigns trailing comments, and the presets are meant to be
// read. The result is loaded, so a backend ralph does not know, or one that
// needs more than a name (command), is refused with the loader's reason.
func setBackend(data []byte, name string) ([]byte, error) {
	if !isPlainWord(name) {
		return nil, withHint(fmt.Errorf("--backend %q: not a backend name", name), "use a name such as claude, codex or gemini")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse preset: %w", err)
	}
	var out []byte
	if v := backendNode(&doc); v != nil {
		start, end, err := scalarSpan(data, v)
		if err != nil {
			return nil, err
		}
		out = append(append(append([]byte{}, data[:start]...), name...), data[end:]...)
	} else {
		out = append(bytes.TrimRight(data, "\n"), []byte("\n\ncli:\n  backend: "+name+"\n")...)
	}
	if _, err := config.LoadBytes(config.DefaultPath, out); err != nil {
		var cerr *config.Error
		if errors.As(err, &cerr) && len(cerr.Problems) == 1 {
			return nil, withHint(fmt.Errorf("--backend %s: %s", name, cerr.Problems[0].Msg), cerr.Problems[0].Hint)
		}
		return nil, fmt.Errorf("--backend %s: %w", name, err)
	}
	return out, nil
}

func isPlainWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// backendNode is the value node of cli.backend, or nil.
func backendNode(doc *yaml.Node) *yaml.Node {
	if len(doc.Content) == 0 {
		return nil
	}
	cli := mappingValue(doc.Content[0], "cli")
	if cli == nil {
		return nil
	}
	v := mappingValue(cli, "backend")
	if v == nil || v.Kind != yaml.ScalarNode {
		return nil
	}
	return v
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarSpan is the byte range of a one-line scalar in data, quotes
// included. yaml.v3 gives lines and columns from 1, columns in characters.
func scalarSpan(data []byte, v *yaml.Node) (int, int, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if v.Line < 1 || v.Line > len(lines) {
		return 0, 0, fmt.Errorf("cli.backend: line %d is outside the preset", v.Line)
	}
	offset := 0
	for _, l := range lines[:v.Line-1] {
		offset += len(l)
	}
	line := lines[v.Line-1]
	col := 0
	for i := 1; i < v.Column && col < len(line); i++ {
		_, size := utf8.DecodeRune(line[col:])
		col += size
	}
	rest := line[col:]
	n := len(v.Value)
	if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		end := bytes.IndexByte(rest[1:], rest[0])
		if end < 0 {
			return 0, 0, fmt.Errorf("cli.backend on line %d: unterminated quote", v.Line)
		}
		n = end + 2
	}
	if !bytes.HasPrefix(rest, []byte(v.Value)) && v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		return 0, 0, fmt.Errorf("cli.backend on line %d: cannot find %q", v.Line, v.Value)
	}
	return offset + col, offset + col + n, nil
}
