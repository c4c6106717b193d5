package config

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/criteria"
)

// Gate is what an event's topic must pass before ralph accepts the event:
// criteria ralph runs itself, and, for ralph-orchestrator's configs,
// evidence text the payload must contain.
type Gate struct {
	// Topic is a topic pattern (events.Match).
	Topic    string
	Criteria []criteria.Spec
	Evidence []string
	File     string
	Line     int
}

// Memories is the memories: section.
type Memories struct {
	// Enabled injects memories into prompts; default true.
	Enabled bool `yaml:"enabled"`
	// Budget bounds the characters of memories injected into one prompt.
	Budget int `yaml:"budget"`
	// Shared keeps .ralph/agent/memories.md visible to git so a team can
	// commit it; default false: all of .ralph/ is ignored.
	Shared bool `yaml:"shared"`
}

// acceptanceCriteria decodes acceptance_criteria: a list of criteria.
func (l *loader) acceptanceCriteria(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		c.AcceptanceCriteria = l.criteriaList(n, path)
	}
}

// criteriaList decodes a list whose items are criterion names (tests_pass)
// or mappings ({type: file_exists, path: out.txt}); a single name or
// mapping is read as a list of one.
func (l *loader) criteriaList(n *yaml.Node, path string) []criteria.Spec {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var specs []criteria.Spec
	for i, item := range items {
		p := path
		if n.Kind == yaml.SequenceNode {
			p = path + "[" + strconv.Itoa(i) + "]"
		}
		if s, ok := l.criterion(item, p); ok {
			specs = append(specs, s)
		}
	}
	return specs
}

func (l *loader) criterion(n *yaml.Node, path string) (criteria.Spec, bool) {
	var s criteria.Spec
	switch n.Kind {
	case yaml.ScalarNode:
		spec, err := criteria.FromName(n.Value)
		if err != nil {
			l.problem(n, "name a criterion ("+strings.Join(criteria.Types(), ", ")+") or write a mapping with type:", "%s: %v", path, err)
			return s, false
		}
		return spec, true
	case yaml.MappingNode:
		l.section(n, path, l.criterionFields(&s), nil)
	default:
		l.problem(n, "write a criterion name such as tests_pass, or a mapping like {type: file_exists, path: out.txt}",
			"%s: expected a criterion, got %s", path, describe(n))
		return s, false
	}
	if err := criteria.Validate(s); err != nil {
		l.problem(n, "see the criterion types in docs/completion.md", "%s: %v", path, err)
		return s, false
	}
	if s.Path != "" {
		l.pathCriteria = append(l.pathCriteria, placedCriterion{spec: s, at: l.at(n)})
	}
	return s, true
}

// CriteriaProblems are the criteria whose file is outside workspace, by an
// absolute path or through a link: they can never pass, since criteria
// look only inside the workspace, so ralph validate reports them and a
// run refuses to start with them rather than ending stuck.
func (c *Config) CriteriaProblems(workspace string) []Problem {
	var out []Problem
	for _, pc := range c.pathCriteria {
		err := criteria.ValidateIn(workspace, pc.spec)
		if err == nil {
			continue
		}
		p := Problem{File: pc.at.file, Line: pc.at.line, Msg: err.Error()}
		var se *criteria.SpecError
		if errors.As(err, &se) {
			p.Msg = se.Criterion + ": " + se.Problem
			p.Hint = se.Hint
		}
		out = append(out, p)
	}
	return out
}

func (l *loader) criterionFields(s *criteria.Spec) []field {
	return []field{
		{"type", l.setString(&s.Type)},
		{"name", l.setString(&s.Name)},
		{"path", l.setString(&s.Path)},
		{"text", l.setString(&s.Text)},
		{"regex", l.setString(&s.Regex)},
		{"command", l.setString(&s.Command)},
		{"exit_code", func(n *yaml.Node, path string) {
			if v, ok := l.integer(n, path); ok {
				code := int(v)
				s.ExitCode = &code
			}
		}},
		{"timeout_seconds", func(n *yaml.Node, path string) {
			if v, ok := l.count(n, path, "the default"); ok {
				s.Timeout = time.Duration(v) * time.Second
			}
		}},
		{"baseline", l.setString(&s.Baseline)},
	}
}

// gates decodes a gates: mapping of topic pattern to what it must pass: a
// list of criteria, or {criteria: […], evidence: ["tests: pass"]}.
func (l *loader) gates(dst *[]Gate) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if n.Kind != yaml.MappingNode {
			l.problem(n, "map each topic to the criteria it needs, e.g. gates: {build.done: [tests_pass]}",
				"%s: expected a mapping of topics to criteria, got %s", path, describe(n))
			return
		}
		var out []Gate
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := path + "." + k.Value
			if !l.checkTopic(k, path, k.Value, "topic pattern") {
				continue
			}
			out = append(out, l.gate(k, v, p))
		}
		*dst = out
	}
}

func (l *loader) gate(k, v *yaml.Node, path string) Gate {
	g := Gate{Topic: k.Value, File: l.origin[k], Line: k.Line}
	if v.Kind != yaml.MappingNode || l.looksLikeCriterion(v) {
		g.Criteria = l.criteriaList(v, path)
		return g
	}
	l.section(v, path, []field{
		{"criteria", func(n *yaml.Node, p string) { g.Criteria = l.criteriaList(n, p) }},
		{"evidence", func(n *yaml.Node, p string) { g.Evidence, _ = l.stringList(n, p, true) }},
	}, nil)
	return g
}

// looksLikeCriterion tells a single criterion mapping ({type: …}) from a
// gate mapping ({criteria: …, evidence: …}).
func (l *loader) looksLikeCriterion(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" {
			return true
		}
	}
	return false
}

func (l *loader) memories(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		l.section(n, path, []field{
			{"enabled", l.setBool(&c.Memories.Enabled)},
			{"budget", l.setCount(&c.Memories.Budget, "no memories injected")},
			{"shared", l.setBool(&c.Memories.Shared)},
		}, orchestratorMemoriesKeys)
	}
}

// envName is what a shell accepts as a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// redactNames decodes redact:, a list of environment variable names.
func (l *loader) redactNames(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		names, nodes := l.stringList(n, path, true)
		for i, name := range names {
			if !envName.MatchString(name) {
				l.problem(nodes[i], "list variable names without $ or a value, e.g. redact: [STRIPE_LIVE, DATABASE_URL]",
					"%s: %q is not an environment variable name", path, name)
				continue
			}
			c.Redact = append(c.Redact, name)
		}
	}
}
