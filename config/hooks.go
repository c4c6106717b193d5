package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Hook is one entry of the hooks: list: a command (run:) or an HTTP POST
// (post:) that ralph fires on each event of a loop's or the autopilot's log
// whose topic matches on:. Package hooks runs them.
type Hook struct {
	Name           string   `yaml:"name"`            // default hook-1, hook-2, … by position
	On             []string `yaml:"on"`              // topic patterns; required
	Run            string   `yaml:"run"`             // a shell command, run with sh -c in the workspace
	Post           string   `yaml:"post"`            // an http or https URL
	TimeoutSeconds int      `yaml:"timeout_seconds"` // default 30
	OnError        string   `yaml:"on_error"`        // warn (default) | fail

	// Where the hook, its run: and its on: items were written, for the
	// problems ralph validate finds.
	File  string `yaml:"-"`
	Line  int    `yaml:"-"`
	RunAt int    `yaml:"-"`
	OnAt  []int  `yaml:"-"`
}

// HookOnError are the values of a hook's on_error.
var HookOnError = []string{"warn", "fail"}

// DefaultHookTimeoutSeconds bounds a hook without timeout_seconds.
const DefaultHookTimeoutSeconds = 30

// hooks decodes the hooks: list. A mapping there is ralph-orchestrator's
// hooks: section (enabled:, events:), which ralph accepts without
// implementing, as its other keys.
func (l *loader) hooks(c *Config, root *yaml.Node) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(root.Content); i += 2 {
				if k := root.Content[i]; root.Content[i+1] == n {
					l.ignored = append(l.ignored, ignoredKey{file: l.origin[k], path: path, line: k.Line})
				}
			}
			return
		}
		if n.Kind != yaml.SequenceNode {
			l.problem(n, "write a list of hooks, e.g. hooks: [{on: [loop.terminate], run: ./notify.sh}]",
				"%s: expected a list of hooks, got %s", path, describe(n))
			return
		}
		names := map[string]bool{}
		c.Hooks = nil
		for i, item := range n.Content {
			h := l.hook(item, fmt.Sprintf("%s[%d]", path, i), i)
			if names[h.Name] {
				l.problem(item, "give each hook its own name:", "%s: a second hook named %q", path, h.Name)
			}
			names[h.Name] = true
			c.Hooks = append(c.Hooks, h)
		}
	}
}

func (l *loader) hook(n *yaml.Node, path string, i int) Hook {
	h := Hook{Name: fmt.Sprintf("hook-%d", i+1), TimeoutSeconds: DefaultHookTimeoutSeconds, OnError: "warn",
		File: l.origin[n], Line: n.Line}
	l.section(n, path, []field{
		{"name", l.setString(&h.Name)},
		{"on", func(n *yaml.Node, p string) {
			vals, nodes := l.stringList(n, p, true)
			for j, v := range vals {
				if l.checkTopic(nodes[j], p, v, "topic pattern") {
					h.On = append(h.On, v)
					h.OnAt = append(h.OnAt, nodes[j].Line)
				}
			}
		}},
		{"run", func(n *yaml.Node, p string) {
			l.setString(&h.Run)(n, p)
			h.RunAt = n.Line
		}},
		{"post", l.setString(&h.Post)},
		{"timeout_seconds", l.setAtLeastOne(&h.TimeoutSeconds, "timeout_seconds: 30")},
		{"on_error", l.setChoice(&h.OnError, HookOnError)},
	}, nil)
	switch {
	case n.Kind != yaml.MappingNode:
	case len(h.On) == 0:
		l.problem(n, "say which events fire it, e.g. on: [loop.terminate]", "%s: on is missing", path)
	case (h.Run == "") == (h.Post == ""):
		l.problem(n, "give either run: (a shell command) or post: (a URL)", "%s: a hook needs exactly one of run and post", path)
	}
	return h
}
