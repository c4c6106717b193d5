package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// flatKey is a top-level key that is another name for a key in a section.
type flatKey struct {
	name    string // as written at the top level
	section string
	key     string
}

// flatKeys are moved into their section before files are merged, so that a
// ralph.json, a ralph-orchestrator v1 file and a ralph.yml say the same
// thing the same way and merge with each other.
//
// A ralph.json task file ({task, acceptance_criteria, max_iterations,
// budget: {max_tokens}}; see docs/architecture.md#ralphjson-task-files)
// is recognised by its top-level task: key; its
// budget: is handled by normalizeBudget and its acceptance_criteria is a
// top-level key of ralph.yml too. ralph-orchestrator's v1 flat keys map
// the way its RalphConfig::normalize maps them.
var flatKeys = []flatKey{
	{"task", "event_loop", "prompt"},
	{"agent", "cli", "backend"},
	{"prompt_file", "event_loop", "prompt_file"},
	{"completion_promise", "event_loop", "completion_promise"},
	{"max_iterations", "event_loop", "max_iterations"},
	{"max_runtime", "event_loop", "max_runtime_seconds"},
	{"max_cost", "event_loop", "max_cost_usd"},
}

// movedSections is the order sections are created in when only flat keys
// name them.
var movedSections = []string{"event_loop", "cli"}

// normalize returns root with the flat keys (and ralph.json's budget) moved
// into their sections. A key set both ways in one file is a problem: which
// one was meant is not clear.
func (l *loader) normalize(root *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: root.Tag, Line: root.Line, Column: root.Column}
	l.origin[out] = l.origin[root]
	moved := map[string][]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if f, ok := findFlatKey(k.Value); ok {
			moved[f.section] = append(moved[f.section], l.renamed(k, f.key, f.name), v)
			if k.Value == "task" {
				// A ralph.json task is done when its criteria pass, claimed
				// or not: check them after every iteration.
				moved["event_loop"] = append(moved["event_loop"], l.implied(k, "verify_every_iteration", "true", "!!bool")...)
			}
			continue
		}
		if k.Value == "budget" {
			moved["event_loop"] = append(moved["event_loop"], l.normalizeBudget(v)...)
			continue
		}
		out.Content = append(out.Content, k, v)
	}
	for _, section := range movedSections {
		if pairs := moved[section]; len(pairs) > 0 {
			l.addToSection(out, section, pairs)
		}
	}
	return out
}

func findFlatKey(name string) (flatKey, bool) {
	for _, f := range flatKeys {
		if f.name == name {
			return f, true
		}
	}
	return flatKey{}, false
}

// implied makes a key: value pair that a file means without saying it, at
// the line of the key that implies it.
func (l *loader) implied(at *yaml.Node, key, value, tag string) []*yaml.Node {
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: at.Line, Column: at.Column}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Line: at.Line, Column: at.Column}
	l.origin[k], l.origin[v] = l.origin[at], l.origin[at]
	return []*yaml.Node{k, v}
}

// normalizeBudget turns ralph.json's budget: {max_tokens: N} into the
// event_loop pairs it means.
func (l *loader) normalizeBudget(v *yaml.Node) []*yaml.Node {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		l.problem(v, "write budget: {max_tokens: 100000}", "budget: expected a mapping, got %s", describe(v))
		return nil
	}
	var pairs []*yaml.Node
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		if k.Value != "max_tokens" {
			l.unknownKey(k, "budget", []string{"max_tokens"})
			continue
		}
		pairs = append(pairs, l.renamed(k, "max_tokens", "budget.max_tokens"), v.Content[i+1])
	}
	return pairs
}

// renamed is a copy of key node k named key, remembering what the user
// wrote so that messages use it.
func (l *loader) renamed(k *yaml.Node, key, written string) *yaml.Node {
	c := *k
	c.Value = key
	l.origin[&c] = l.origin[k]
	l.aliasOf[&c] = written
	return &c
}

// addToSection adds moved key/value pairs to root's section, creating it
// when the file has none.
func (l *loader) addToSection(root *yaml.Node, section string, pairs []*yaml.Node) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != section {
			continue
		}
		v := root.Content[i+1]
		switch {
		case isNull(v):
			root.Content[i+1] = l.mapping(v, pairs)
		case v.Kind == yaml.MappingNode:
			root.Content[i+1] = l.mapping(v, l.withoutTwice(v, section, pairs))
		}
		// Anything else is the wrong type for a section, reported when it
		// is decoded; the moved keys would only add noise.
		return
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: section, Line: pairs[0].Line, Column: pairs[0].Column}
	l.origin[key] = l.origin[pairs[0]]
	root.Content = append(root.Content, key, l.mapping(key, pairs))
}

// withoutTwice drops the moved pairs whose key the section already sets,
// reporting each.
func (l *loader) withoutTwice(sec *yaml.Node, section string, pairs []*yaml.Node) []*yaml.Node {
	var keep []*yaml.Node
	for i := 0; i+1 < len(pairs); i += 2 {
		if other := findKey(sec, pairs[i].Value); other != nil {
			written := l.aliasOf[pairs[i]]
			l.problem(pairs[i], fmt.Sprintf("remove %s, or %s.%s", written, section, other.Value),
				"%s is set twice: here and as %s.%s on line %d", written, section, other.Value, other.Line)
			continue
		}
		keep = append(keep, pairs[i], pairs[i+1])
	}
	return append(sec.Content[:len(sec.Content):len(sec.Content)], keep...)
}

// mapping is a new mapping node at like's position holding pairs.
func (l *loader) mapping(like *yaml.Node, pairs []*yaml.Node) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: like.Line, Column: like.Column, Content: pairs}
	l.origin[m] = l.origin[like]
	return m
}

// findKey is the key node of name in mapping m, or nil.
func findKey(m *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i]
		}
	}
	return nil
}
