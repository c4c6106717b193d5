package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Chain is one named chain of loops under chains: (`ralph chain run
// NAME`): steps run one after another in the workspace, each a whole loop
// with the config its step names, within one budget for them all.
type Chain struct {
	Name   string
	Steps  []ChainStep
	Budget ChainBudget
	// File and Line say where the chain is written.
	File string
	Line int
}

// ChainStep is a step as written: a preset name (ralph init --list) or a
// config file, and text added to its objective. Which of the two a bare
// string is, the command line decides (it knows the presets).
type ChainStep struct {
	// Name is the bare string, "" when the step is a mapping.
	Name   string `yaml:"-"`
	Preset string `yaml:"preset"`
	Config string `yaml:"config"`
	Prompt string `yaml:"prompt"`
	// File and Line say where the step is written, for its errors.
	File string `yaml:"-"`
	Line int    `yaml:"-"`
}

// ChainBudget bounds a chain as a whole; 0 leaves a bound off.
type ChainBudget struct {
	MaxSteps          int     `yaml:"max_steps"`
	MaxRuntimeSeconds int     `yaml:"max_runtime_seconds"`
	MaxCostUSD        float64 `yaml:"max_cost_usd"`
	MaxTokens         int64   `yaml:"max_tokens"`
}

// MaxRuntime is MaxRuntimeSeconds as a duration.
func (b ChainBudget) MaxRuntime() time.Duration {
	return time.Duration(b.MaxRuntimeSeconds) * time.Second
}

// chainsSection decodes chains:, a mapping of chain name to its steps and
// budget.
func (l *loader) chainsSection(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if n.Kind != yaml.MappingNode {
			l.problem(n, "name each chain below chains:, e.g. chains: {review-then-fix: {steps: [review, tdd]}}",
				"%s: expected a mapping of chain names to chains, got %s", path, describe(n))
			return
		}
		c.Chains = nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ch, ok := l.chain(n.Content[i], n.Content[i+1], path); ok {
				c.Chains = append(c.Chains, ch)
			}
		}
	}
}

func (l *loader) chain(k, v *yaml.Node, path string) (Chain, bool) {
	ch := Chain{Name: k.Value, File: l.origin[k], Line: k.Line}
	sub := path + "." + k.Value
	if v.Kind != yaml.MappingNode {
		l.problem(v, fmt.Sprintf("give its steps, e.g. %s: {steps: [review, tdd]}", k.Value),
			"%s: expected a mapping with steps:, got %s", sub, describe(v))
		return ch, false
	}
	before := len(l.problems)
	var steps *yaml.Node
	l.section(v, sub, []field{
		{"steps", keep(&steps)},
		{"budget", func(n *yaml.Node, path string) { l.section(n, path, l.chainBudgetFields(&ch.Budget), nil) }},
	}, nil)
	if steps == nil || (steps.Kind == yaml.SequenceNode && len(steps.Content) == 0) {
		l.problem(v, fmt.Sprintf("list the loops it runs, e.g. %s: {steps: [review, tdd]}: preset names (ralph init --list) or config files", k.Value),
			"%s: a chain without steps", sub)
		return ch, false
	}
	ch.Steps = l.chainSteps(steps, sub+".steps")
	return ch, len(l.problems) == before
}

func (l *loader) chainSteps(n *yaml.Node, path string) []ChainStep {
	if n.Kind != yaml.SequenceNode {
		l.problem(n, "write one step a line, e.g. steps: [review, tdd]", "%s: expected a list of steps, got %s", path, describe(n))
		return nil
	}
	var out []ChainStep
	for i, item := range n.Content {
		sub := fmt.Sprintf("%s[%d]", path, i)
		s := ChainStep{File: l.origin[item], Line: item.Line}
		switch item.Kind {
		case yaml.ScalarNode:
			s.Name = item.Value
		case yaml.MappingNode:
			l.section(item, sub, []field{
				{"preset", l.setString(&s.Preset)},
				{"config", l.setString(&s.Config)},
				{"prompt", l.setString(&s.Prompt)},
			}, nil)
			if (s.Preset == "") == (s.Config == "") {
				l.problem(item, "give one of preset: NAME (ralph init --list) or config: FILE",
					"%s: a step needs exactly one of preset and config", sub)
				continue
			}
		default:
			l.problem(item, "write a preset name or a config file, or {preset: NAME, prompt: TEXT}",
				"%s: expected a step, got %s", sub, describe(item))
			continue
		}
		if s.Name == "" && s.Preset == "" && s.Config == "" {
			l.problem(item, "write a preset name or a config file", "%s: an empty step", sub)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (l *loader) chainBudgetFields(b *ChainBudget) []field {
	return []field{
		{"max_steps", func(n *yaml.Node, path string) {
			if v, ok := l.integer(n, path); ok && l.positive(n, path, float64(v), "max_steps: 3") {
				b.MaxSteps = int(v)
			}
		}},
		{"max_runtime_seconds", func(n *yaml.Node, path string) {
			if v, ok := l.integer(n, path); ok && l.positive(n, path, float64(v), "max_runtime_seconds: 3600") {
				b.MaxRuntimeSeconds = int(v)
			}
		}},
		{"max_cost_usd", func(n *yaml.Node, path string) {
			if v, ok := l.number(n, path); ok && l.positive(n, path, v, "max_cost_usd: 5.00") {
				b.MaxCostUSD = v
			}
		}},
		{"max_tokens", func(n *yaml.Node, path string) {
			if v, ok := l.integer(n, path); ok && l.positive(n, path, float64(v), "max_tokens: 2000000") {
				b.MaxTokens = v
			}
		}},
	}
}

// positive reports whether a budget's bound is above 0, and a problem
// when it is not: a bound of 0 would stop the chain before it starts,
// and leaving the key out is how a chain has no such bound.
func (l *loader) positive(n *yaml.Node, path string, v float64, example string) bool {
	if v > 0 {
		return true
	}
	l.problem(n, "use a number above 0, e.g. "+example+", or leave the key out for no bound",
		"%s must be positive, got %s", path, n.Value)
	return false
}

// Chain returns the chain named name, and whether there is one.
func (c *Config) Chain(name string) (Chain, bool) {
	for _, ch := range c.Chains {
		if ch.Name == name {
			return ch, true
		}
	}
	return Chain{}, false
}

// ChainNames are the chains' names in file order.
func (c *Config) ChainNames() []string {
	names := make([]string, len(c.Chains))
	for i, ch := range c.Chains {
		names[i] = ch.Name
	}
	return names
}
