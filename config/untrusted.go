package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/criteria"
)

// Commands lists what in c would run a command on the machine that runs
// its loop, or choose that loop's agent and the agent's environment, one
// line each: the hooks; cli: when it is not the default, and every hat's
// backend: (a command backend is a program; args, env and prompt_flag
// can make any agent CLI run one, or send its credentials elsewhere);
// acceptance criteria and gates that run a command (criteria.Spec.
// RunsCommand); and autopilot.verify and a command tracker.
func (c *Config) Commands() []string {
	var out []string
	for _, h := range c.Hooks {
		if h.Run != "" {
			out = append(out, fmt.Sprintf("hook %s (run: %s)", h.Name, h.Run))
		} else {
			out = append(out, fmt.Sprintf("hook %s (post: %s)", h.Name, h.Post))
		}
	}
	if !reflect.DeepEqual(c.CLI, Default().CLI) {
		out = append(out, "cli ("+describeCLI(c.CLI)+")")
	}
	out = append(out, commandCriteria("acceptance_criteria", c.AcceptanceCriteria)...)
	out = append(out, commandGates("gates", c.Gates)...)
	for _, h := range c.Hats {
		if h.Backend != nil {
			out = append(out, "hats."+h.ID+".backend ("+describeCLI(*h.Backend)+")")
		}
		out = append(out, commandGates("hats."+h.ID+".gates", h.Gates)...)
	}
	out = append(out, commandCriteria("autopilot.verify", c.Autopilot.Verify)...)
	if c.Autopilot.Source.Type == "command" {
		out = append(out, "autopilot.source (a command tracker)")
	}
	return out
}

// ShellCommands lists what in c runs a shell command with sh -c, one line
// each, as Commands names it: hooks with run:, the criteria and gates
// that run a command, autopilot.verify, and a command tracker. Where
// there is no sh (Windows without Git for Windows), a run that has any
// is refused before it starts.
func (c *Config) ShellCommands() []string {
	var out []string
	for _, h := range c.Hooks {
		if h.Run != "" {
			out = append(out, "hook "+h.Name)
		}
	}
	out = append(out, commandCriteria("acceptance_criteria", c.AcceptanceCriteria)...)
	out = append(out, commandGates("gates", c.Gates)...)
	for _, h := range c.Hats {
		out = append(out, commandGates("hats."+h.ID+".gates", h.Gates)...)
	}
	out = append(out, commandCriteria("autopilot.verify", c.Autopilot.Verify)...)
	if c.Autopilot.Source.Type == "command" {
		out = append(out, "autopilot.source (a command tracker)")
	}
	return out
}

func describeCLI(c CLI) string {
	parts := []string{"backend " + c.Backend}
	if c.Command != "" {
		parts = append(parts, "command "+c.Command)
	}
	if len(c.Args) > 0 {
		parts = append(parts, "args "+strings.Join(c.Args, " "))
	}
	if c.PromptFlag != "" {
		parts = append(parts, "prompt_flag "+c.PromptFlag)
	}
	if len(c.Env) > 0 {
		names := make([]string, 0, len(c.Env))
		for name := range c.Env {
			names = append(names, name)
		}
		slices.Sort(names)
		parts = append(parts, "env "+strings.Join(names, ", "))
	}
	for _, f := range c.Fallback {
		parts = append(parts, "fallback ("+describeCLI(f)+")")
	}
	return strings.Join(parts, ", ")
}

func commandCriteria(path string, specs []criteria.Spec) []string {
	var out []string
	for _, s := range specs {
		if s.RunsCommand() {
			out = append(out, path+": "+s.Label())
		}
	}
	return out
}

func commandGates(path string, gates []Gate) []string {
	var out []string
	for _, g := range gates {
		out = append(out, commandCriteria(path+"."+g.Topic, g.Criteria)...)
	}
	return out
}

// WithoutCommands merges layers as LoadLayers does and returns the result
// as one config file without anything that Commands lists, with the
// lines Commands gives for what it took out. It works on the parsed
// files, never on their text: it drops hooks:, cli:, autopilot: (which a
// loop does not read) and every hat's backend:, and from
// acceptance_criteria and gates (top-level and the hats') the criteria
// that run a command; a gate left with nothing to check goes too.
// Everything else stays as the layers say, the keys of other programs
// (which ralph ignores), YAML anchors and the sandbox: sections (the
// top-level one and the hats'; see WithoutSandbox) aside. The file loaded again must
// have nothing Commands lists, or it is refused: the check is on what
// ralph would run, not on how the file spells it.
//
// A worker runs a task's loop from such a file unless its owner trusts
// task commands, so that a coordinator (or whoever can sign as one) cannot
// run a command on a machine that did not agree to it; the worker's own
// config then names the agent.
func WithoutCommands(layers ...Layer) (data []byte, dropped []string, err error) {
	cfg, err := LoadLayers(layers...)
	if err != nil {
		return nil, nil, err
	}
	l := newLoader()
	var root *yaml.Node
	for _, layer := range layers {
		root = l.merge(root, l.parse(layer.Name, layer.Data))
	}
	if len(l.problems) > 0 || root == nil {
		return nil, nil, &Error{Problems: l.sortedProblems(), cause: l.cause}
	}
	data, err = yaml.Marshal(l.withoutCommands(root))
	if err != nil {
		return nil, nil, fmt.Errorf("write the config without its commands: %w", err)
	}
	check, err := LoadBytes("task.yml", data)
	if err != nil {
		return nil, nil, fmt.Errorf("the config without its commands does not load: %w", err)
	}
	if left := check.Commands(); len(left) > 0 {
		return nil, nil, fmt.Errorf("the config still runs commands once they are taken out: %s", strings.Join(left, "; "))
	}
	return data, cfg.Commands(), nil
}

// untrustedTopKeys are the sections a config keeps without its commands;
// each holds data only, or criteria that are filtered. sandbox: is not
// one: a task's config must not loosen the confinement of the worker's
// agents (see WithoutSandbox), nor is a hat's.
var untrustedTopKeys = []string{
	"event_loop", "hats", "acceptance_criteria", "gates", "memories", "human", "redact", "pricing",
}

// untrustedHatKeys are the keys a hat keeps without its commands.
var untrustedHatKeys = []string{
	"name", "description", "triggers", "publishes", "instructions", "default_publishes", "max_activations", "gates",
	"concurrency", "aggregate", "timeout",
}

// withoutCommands is root, a merged tree, with only what untrustedTopKeys
// and untrustedHatKeys allow, and no criterion that runs a command.
func (l *loader) withoutCommands(root *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: root.Tag}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if !slices.Contains(untrustedTopKeys, k.Value) {
			continue
		}
		switch k.Value {
		case "hats":
			v = l.hatsWithoutCommands(v)
		case "acceptance_criteria":
			v = l.criteriaWithoutCommands(v)
		case "gates":
			v = l.gatesWithoutCommands(v)
		}
		if v != nil {
			out.Content = append(out.Content, k, v)
		}
	}
	return out
}

func (l *loader) hatsWithoutCommands(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag}
	for i := 0; i+1 < len(n.Content); i += 2 {
		id, hat := n.Content[i], n.Content[i+1]
		if hat.Kind == yaml.MappingNode {
			kept := &yaml.Node{Kind: yaml.MappingNode, Tag: hat.Tag}
			for j := 0; j+1 < len(hat.Content); j += 2 {
				k, v := hat.Content[j], hat.Content[j+1]
				if !slices.Contains(untrustedHatKeys, k.Value) {
					continue
				}
				if k.Value == "gates" {
					if v = l.gatesWithoutCommands(v); v == nil {
						continue
					}
				}
				kept.Content = append(kept.Content, k, v)
			}
			hat = kept
		}
		out.Content = append(out.Content, id, hat)
	}
	return out
}

// criteriaWithoutCommands is a criteria list (or a single criterion)
// without the criteria that run a command, or nil when none is left.
func (l *loader) criteriaWithoutCommands(n *yaml.Node) *yaml.Node {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, item := range items {
		spec, ok := l.criterion(item, "criterion["+strconv.Itoa(i)+"]")
		if ok && !spec.RunsCommand() {
			out.Content = append(out.Content, item)
		}
	}
	if len(out.Content) == 0 {
		return nil
	}
	return out
}

// gatesWithoutCommands is a gates: mapping whose gates check no command,
// or nil when no gate is left.
func (l *loader) gatesWithoutCommands(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag}
	for i := 0; i+1 < len(n.Content); i += 2 {
		topic, gate := n.Content[i], n.Content[i+1]
		if gate = l.gateWithoutCommands(gate); gate != nil {
			out.Content = append(out.Content, topic, gate)
		}
	}
	if len(out.Content) == 0 {
		return nil
	}
	return out
}

// gateWithoutCommands is one gate (criteria, or {criteria, evidence})
// without its command criteria, or nil when it has nothing left to check.
func (l *loader) gateWithoutCommands(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.MappingNode || l.looksLikeCriterion(n) {
		return l.criteriaWithoutCommands(n)
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "criteria":
			v = l.criteriaWithoutCommands(v)
		case "evidence":
		default:
			v = nil
		}
		if v != nil {
			out.Content = append(out.Content, k, v)
		}
	}
	if len(out.Content) == 0 {
		return nil
	}
	return out
}
