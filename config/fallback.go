package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// chainEntry is one decoded entry of a fallback list and where it is, for
// the checks that need the whole chain.
type chainEntry struct {
	cli  CLI
	node *yaml.Node
	path string
}

// fallbackFields are the keys of a backend that heads a chain (cli:, a
// hat's backend mapping): fallback and fallback_after_seconds. set marks
// them, as cliFields does its keys; chain collects the entries decoded.
func (l *loader) fallbackFields(c *CLI, set map[string]bool, chain *[]chainEntry) []field {
	return []field{
		{"fallback", func(n *yaml.Node, path string) {
			set["fallback"] = true
			*chain = l.fallbackList(n, path)
			c.Fallback = make([]CLI, 0, len(*chain))
			for _, e := range *chain {
				c.Fallback = append(c.Fallback, e.cli)
			}
		}},
		{"fallback_after_seconds", func(n *yaml.Node, path string) {
			set["fallback_after_seconds"] = true
			l.setAtLeastOne(&c.FallbackAfterSeconds, "fallback_after_seconds: 600")(n, path)
		}},
	}
}

// fallbackList decodes fallback: a list of backends, each a name or a
// mapping shaped like a hat's backend (with name:, and no fallback of its
// own). A single backend may be written without the list.
func (l *loader) fallbackList(n *yaml.Node, path string) []chainEntry {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []chainEntry
	for i, item := range items {
		at := path
		if n.Kind == yaml.SequenceNode {
			at = fmt.Sprintf("%s[%d]", path, i)
		}
		if c, ok := l.fallbackEntry(item, at); ok {
			out = append(out, chainEntry{cli: c, node: item, path: at})
		}
	}
	return out
}

func (l *loader) fallbackEntry(n *yaml.Node, path string) (CLI, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		name := l.backendName(n, path, n.Value)
		if name == "command" {
			l.problem(n, "write the entry as a mapping: {name: command, command: ./agent.sh}",
				"%s is \"command\", which needs a command to run", path)
			return CLI{}, false
		}
		return CLI{Backend: name}, name != ""
	case yaml.MappingNode:
		var c CLI
		set, at := map[string]bool{}, (*yaml.Node)(nil)
		l.section(n, path, l.cliFields(&c, set, &at, true), nil)
		if !set["backend"] {
			l.problem(n, "name the backend of the entry, e.g. {name: gemini, model: gemini-2.5-pro}",
				"%s names no backend", path)
			return CLI{}, false
		}
		l.checkCommand(c, at, path)
		return c, c.Backend != ""
	case yaml.DocumentNode, yaml.SequenceNode, yaml.AliasNode:
		// Not a backend: reported below.
	}
	l.problem(n, "write a backend name, e.g. codex, or a mapping, e.g. {name: gemini, model: gemini-2.5-pro}",
		"%s: expected a backend name or a mapping, got %s", path, describe(n))
	return CLI{}, false
}

// checkChain reports a chain that names a backend twice: ralph tells the
// backends of a chain apart by name (which one is limited, until when),
// so each may appear once, the primary included. Two command backends are
// told apart by their program.
func (l *loader) checkChain(primary CLI, chain []chainEntry, path string) {
	head := path // a hat's backend: hats.builder.backend
	if path == "cli" {
		head = "cli.backend"
	}
	seen := map[string]string{chainKey(primary): head}
	for _, e := range chain {
		key := chainKey(e.cli)
		first, dup := seen[key]
		switch {
		case dup && first == head:
			l.problem(e.node, "a fallback is another backend than the one it stands in for; remove it, or name another CLI",
				"%s: %s is %s already; a chain tries each backend once", e.path, e.cli.Backend, first)
		case dup:
			l.problem(e.node, "remove one of them: a chain tries each backend once",
				"%s: %s is listed twice in %s.fallback (also %s)", e.path, e.cli.Backend, path, first)
		default:
			seen[key] = e.path
		}
	}
}

func chainKey(c CLI) string {
	if c.Backend == "command" {
		return "command " + c.Command
	}
	return c.Backend
}
