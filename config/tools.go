package config

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// disallowed_tools: cli:'s list and each hat's, added together, go to the
// deny list of the CLI the hat runs on. A deny list is never weakened by a
// hat: a hat adds tools to cli:'s, it cannot take any away.

// denyLists are the CLIs that can deny tools and how (backends passes the
// list; config cannot import backends, and a test in cmd/ralph checks the
// two agree).
var denyLists = map[string]string{
	"claude":   "--disallowedTools",
	"copilot":  "--deny-tool",
	"gemini":   "--policy",
	"opencode": "OPENCODE_PERMISSION",
	"qwen":     "--exclude-tools",
}

// noDenyListHints say what a CLI without a deny list has instead, where it
// has something.
var noDenyListHints = map[string]string{
	"pi": "pi has an allow list only: list the tools it may use in cli.args: [--tools, \"read,edit,write\"]",
}

// CanDenyTools says backend (a name of cli.backend) has a deny list ralph
// passes disallowed_tools to.
func CanDenyTools(backend string) bool { return denyLists[backend] != "" }

// DisallowedTools is what h's agent may not use: cli.disallowed_tools,
// then h's own, each once.
func (c *Config) DisallowedTools(h Hat) []string {
	var out []string
	for _, t := range slices.Concat(c.CLI.DisallowedTools, h.DisallowedTools) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Keys of loader.toolSites.
const cliToolsSite = "cli"

func hatToolsSite(hat string) string   { return "hats." + hat + ".disallowed_tools" }
func hatBackendSite(hat string) string { return "hats." + hat + ".backend" }

// setTools decodes a disallowed_tools list (cli:'s when hat is ""): tool
// names or patterns, none empty.
func (l *loader) setTools(dst *[]string, hat string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		site := cliToolsSite
		if hat != "" {
			site = hatToolsSite(hat)
		}
		l.toolSites[site] = n
		vals, nodes := l.stringList(n, path, true)
		var out []string
		for i, v := range vals {
			if strings.TrimSpace(v) == "" {
				l.problem(nodes[i], "name a tool as the agent CLI calls it, e.g. Bash for claude, or remove the empty item",
					"%s: item %d is empty", path, i+1)
				continue
			}
			out = append(out, v)
		}
		*dst = out
	}
}

// checkToolDenial reports an agent that is to be denied tools but may run
// on a CLI that cannot deny them: the run's default (cli: and its
// fallback), and each hat that has a backend or a list of its own. auto is
// left to the start of the run, which knows the CLI it picks; so is
// `--backend`.
func (l *loader) checkToolDenial(c *Config) {
	if len(c.CLI.DisallowedTools) > 0 {
		l.checkChainDenies(c.CLI, "", "cli.backend", l.toolSites[cliToolsSite])
	}
	for _, h := range c.Hats {
		if len(c.DisallowedTools(h)) == 0 || (h.Backend == nil && len(c.CLI.DisallowedTools) > 0) {
			continue // none, or the default's check covers it
		}
		at := cmp.Or(l.toolSites[hatToolsSite(h.ID)], l.toolSites[hatBackendSite(h.ID)], l.toolSites[cliToolsSite])
		head, where := c.CLI, "cli.backend"
		if h.Backend != nil {
			head, where = *h.Backend, hatBackendSite(h.ID)
		}
		l.checkChainDenies(head, h.ID, where, at)
	}
}

// checkChainDenies reports, at n, each backend of the chain head starts
// that cannot deny tools; hat is "" for the run's default.
func (l *loader) checkChainDenies(head CLI, hat, where string, n *yaml.Node) {
	if n == nil {
		return
	}
	for i, b := range slices.Concat([]CLI{head}, head.Fallback) {
		if b.Backend == "" || b.Backend == "auto" || CanDenyTools(b.Backend) {
			continue
		}
		on := where
		if i > 0 {
			on = fmt.Sprintf("%s's fallback", strings.TrimSuffix(where, ".backend"))
		}
		who := "cli"
		if hat != "" {
			who = "hat " + hat
		}
		hint := fmt.Sprintf("run it on a CLI that can deny tools (%s), or remove disallowed_tools", strings.Join(slices.Sorted(maps.Keys(denyLists)), ", "))
		if h := noDenyListHints[b.Backend]; h != "" {
			hint += "; " + h
		}
		l.problem(n, hint, "%s: disallowed_tools needs a CLI that can deny tools, but it may run on %s (%s), which has no deny list",
			who, b.Backend, on)
	}
}
