package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/internal/suggest"
)

// Decoding walks yaml.Node trees by hand rather than calling Node.Decode
// on structs, so that every problem (unknown key, wrong type, bad value)
// gets its own file:line and hint, and loading goes on after the first one.

// field is one key a section accepts and how to decode its value. The value
// is never null: an empty value keeps the default.
type field struct {
	key    string
	decode func(n *yaml.Node, path string)
}

// section decodes mapping n, the section at path ("" for the top level).
// Keys in orchestrator are ralph-orchestrator keys, accepted and reported
// in one warning.
func (l *loader) section(n *yaml.Node, path string, fields []field, orchestrator []string) {
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.problem(n, "write the keys of "+path+" indented below it, one per line",
			"%s: expected a mapping, got %s", path, describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := l.pathOf(k, path)
		switch f, known := findField(fields, k.Value); {
		case known:
			if !isNull(v) {
				f.decode(v, sub)
			}
		case slices.Contains(orchestrator, k.Value):
			l.ignored = append(l.ignored, ignoredKey{file: l.origin[k], path: sub, line: k.Line})
		case path == "" && strings.HasPrefix(k.Value, "_"):
			// Top-level keys starting with _ hold YAML anchors for reuse
			// elsewhere (ralph-orchestrator's presets do this); their
			// content counts only where an alias uses it.
		default:
			l.unknownKey(k, path, fieldKeys(fields))
		}
	}
}

// pathOf is the dotted path of key k in section path, as the user wrote it.
func (l *loader) pathOf(k *yaml.Node, path string) string {
	if written := l.aliasOf[k]; written != "" {
		return written
	}
	if path == "" {
		return k.Value
	}
	return path + "." + k.Value
}

func findField(fields []field, key string) (field, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

func fieldKeys(fields []field) []string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return keys
}

// unknownKey reports key k, which section path does not accept, with the
// nearest known key when one is close.
func (l *loader) unknownKey(k *yaml.Node, path string, known []string) {
	where, candidates := "in "+path, known
	if path == "" {
		where = "at top level"
		// The flat keys were moved away before decoding but are still
		// right at the top level, so they are worth suggesting.
		for _, f := range flatKeys {
			candidates = append(candidates[:len(candidates):len(candidates)], f.name)
		}
		candidates = append(candidates, "budget")
	}
	if path == "" && k.Value == "limits" {
		// The pacing budgets are event_loop keys, beside max_cost_usd
		// and max_tokens.
		l.problem(k, "move its keys under event_loop:, e.g. event_loop: {tokens_per_hour: 2000000, cost_per_day: 50}",
			"unknown key %q at top level; the limits and pacing budgets (tokens_per_hour, tokens_per_day, cost_per_hour, cost_per_day) are keys of event_loop", k.Value)
		return
	}
	if s := suggest.Closest(k.Value, candidates); s != "" {
		l.problem(k, fmt.Sprintf("rename it to %q, or remove it", s),
			"unknown key %q %s; did you mean %q?", k.Value, where, s)
		return
	}
	l.problem(k, "remove it, or use one of: "+strings.Join(known, ", "), "unknown key %q %s", k.Value, where)
}

// str decodes a string. Any scalar is accepted as its text, so that
// `model: 4` or an env value of `8080` need no quotes.
func (l *loader) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		l.problem(n, "write it on one line after the colon, quoted if it has special characters",
			"%s: expected a string, got %s", path, describe(n))
		return "", false
	}
	return n.Value, true
}

// integer decodes a whole number.
func (l *loader) integer(n *yaml.Node, path string) (int64, bool) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		l.problem(n, "write a whole number without quotes, e.g. "+lastKey(path)+": 10",
			"%s: expected an integer, got %s", path, describe(n))
		return 0, false
	}
	return v, true
}

// number decodes a number, whole or not.
func (l *loader) number(n *yaml.Node, path string) (float64, bool) {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		l.problem(n, "write a number without quotes, e.g. "+lastKey(path)+": 2.50",
			"%s: expected a number, got %s", path, describe(n))
		return 0, false
	}
	return v, true
}

// boolean decodes true or false.
func (l *loader) boolean(n *yaml.Node, path string) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		l.problem(n, "write true or false, without quotes", "%s: expected true or false, got %s", path, describe(n))
		return false, false
	}
	return v, true
}

// stringList decodes a list of strings, returning the item nodes with them for
// per-item checks. With one, a single string is read as a one-item list.
func (l *loader) stringList(n *yaml.Node, path string, one bool) ([]string, []*yaml.Node) {
	items := []*yaml.Node{n}
	switch {
	case n.Kind == yaml.SequenceNode:
		items = n.Content
	case n.Kind != yaml.ScalarNode || !one:
		l.problem(n, "write a list, e.g. "+lastKey(path)+": [a, b]", "%s: expected a list of strings, got %s", path, describe(n))
		return nil, nil
	}
	vals := make([]string, 0, len(items))
	nodes := make([]*yaml.Node, 0, len(items))
	for _, item := range items {
		if item.Kind != yaml.ScalarNode || isNull(item) {
			l.problem(item, "write each item as a string on its own `- ` line", "%s: expected a string item, got %s", path, describe(item))
			continue
		}
		vals = append(vals, item.Value)
		nodes = append(nodes, item)
	}
	return vals, nodes
}

// stringMap decodes a mapping of strings to strings (cli.env). An empty
// value is the empty string.
func (l *loader) stringMap(n *yaml.Node, path string) map[string]string {
	if n.Kind != yaml.MappingNode {
		l.problem(n, "write one NAME: value per line, indented below "+lastKey(path),
			"%s: expected a mapping, got %s", path, describe(n))
		return nil
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isNull(v) {
			m[k.Value] = ""
			continue
		}
		if s, ok := l.str(v, path+"."+k.Value); ok {
			m[k.Value] = s
		}
	}
	return m
}

// lastKey is the last element of a dotted path.
func lastKey(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}

// Field decoders. Each returns a field.decode that stores into dst.

func (l *loader) setString(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := l.str(n, path); ok {
			*dst = v
		}
	}
}

func (l *loader) setBool(dst *bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := l.boolean(n, path); ok {
			*dst = v
		}
	}
}

// setCount decodes a whole number that must not be negative; zeroMeans
// says what 0 does, for the hint.
func (l *loader) setCount(dst *int, zeroMeans string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := l.count(n, path, zeroMeans); ok {
			*dst = int(v)
		}
	}
}

func (l *loader) setCount64(dst *int64, zeroMeans string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := l.count(n, path, zeroMeans); ok {
			*dst = v
		}
	}
}

func (l *loader) count(n *yaml.Node, path, zeroMeans string) (int64, bool) {
	v, ok := l.integer(n, path)
	if ok && v < 0 {
		l.problem(n, "use a positive number, or 0 for "+zeroMeans, "%s must not be negative, got %d", path, v)
		return 0, false
	}
	return v, ok
}

// setTopic decodes one topic; empty is allowed only when optional.
func (l *loader) setTopic(dst *string, optional bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok || (optional && v == "") || !l.checkTopic(n, path, v, "topic") {
			return
		}
		*dst = v
	}
}

// setTopics decodes a list of topics (or of topic patterns).
func (l *loader) setTopics(dst *[]string, kind string, one bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		vals, nodes := l.stringList(n, path, one)
		for i, v := range vals {
			l.checkTopic(nodes[i], path, v, kind)
		}
		*dst = vals
	}
}

// checkTopic reports a topic that cannot be one.
//
// TODO: call events.ValidateTopic and events.ValidatePattern once package
// events has them; until then this checks what any topic needs.
func (l *loader) checkTopic(n *yaml.Node, path, topic, kind string) bool {
	const hint = "a topic is words joined by dots, without spaces, e.g. build.done"
	switch {
	case topic == "":
		l.problem(n, hint, "%s: invalid %s %q: it is empty", path, kind, topic)
	case strings.IndexFunc(topic, unicode.IsSpace) >= 0:
		l.problem(n, hint, "%s: invalid %s %q: it contains whitespace", path, kind, topic)
	default:
		return true
	}
	return false
}
