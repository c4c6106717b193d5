package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/internal/suggest"
)

// Sandbox is a sandbox: section: how the kernel confines an agent. It is
// kept as plain strings; package internal/sandbox, which applies it, has
// the typed form.
//
// It may be written at the top level (Config.Sandbox: `ralph loop`'s
// agents), under a hat (Hat.Sandbox: that hat's agent) and under
// autopilot: (Autopilot.Sandbox: the agents of the autopilot's slots and
// of the cluster's workers). A section lays the keys it sets over the
// section below it, a list replacing a list, as files merge; what no
// section sets takes its default ([Config.LoopSandbox],
// [Config.SlotSandbox], [Sandbox.ForHat]). The zero value sets nothing.
//
// ralph-orchestrator's config has no sandbox: key, nor had one (its
// crates/ralph-core/src/config.rs, through its history), so none of its
// files means something else by it.
type Sandbox struct {
	// Mode is off, auto, landlock, bwrap or seatbelt; "" when not set.
	Mode string `yaml:"mode"`
	// Write are extra writable paths, absolute and cleaned (see Load for
	// a config not on disk). The workspace, a private temporary directory
	// and the agent CLI's own state are always writable.
	Write []string `yaml:"write"`
	// DenyRead are paths no agent may read, absolute and cleaned, beyond
	// the mechanism's defaults (~/.ssh, ~/.aws, …).
	DenyRead []string `yaml:"deny_read"`
	// Network is allow or deny (no network but loopback); "" when not set.
	Network string `yaml:"network"`

	// Where each key was set, as "sandbox.mode (ralph.yml:3)"; "" when it
	// was not, which is also how a layer tells a list set to [] from one
	// not set.
	modeFrom, writeFrom, denyReadFrom, networkFrom string
}

// SandboxModes are the values of sandbox.mode; auto picks the strongest
// mechanism the machine has.
var SandboxModes = []string{"off", "auto", "landlock", "bwrap", "seatbelt"}

// SandboxNetworks are the values of sandbox.network.
var SandboxNetworks = []string{"allow", "deny"}

// The defaults of what no section sets: `ralph loop` runs its agent
// unconfined unless configured, and the autopilot's slots (and workers),
// which run unattended, confined as well as the machine allows.
const (
	DefaultLoopSandboxMode = "off"
	DefaultSlotSandboxMode = "auto"
	DefaultSandboxNetwork  = "allow"
)

// sandboxKeys are the keys of a sandbox: section, for Source.
var sandboxKeys = []string{"mode", "write", "deny_read", "network"}

// Configured reports whether the section sets any key.
func (s Sandbox) Configured() bool {
	return s.modeFrom != "" || s.writeFrom != "" || s.denyReadFrom != "" || s.networkFrom != ""
}

// Source says where key (mode, write, deny_read or network) was set, as
// "hats.builder.sandbox.mode (ralph.yml:12)", or "" when it has its
// default: for a message about a value this machine cannot honour, such
// as a mode it does not have.
func (s Sandbox) Source(key string) string {
	switch key {
	case "mode":
		return s.modeFrom
	case "write":
		return s.writeFrom
	case "deny_read":
		return s.denyReadFrom
	case "network":
		return s.networkFrom
	}
	panic("config: Sandbox.Source of unknown key " + strconv.Quote(key) + "; use one of " + strings.Join(sandboxKeys, ", "))
}

// over is s with the keys that top sets laid over it.
func (s Sandbox) over(top Sandbox) Sandbox {
	out := s
	out.Write, out.DenyRead = slices.Clone(s.Write), slices.Clone(s.DenyRead)
	if top.modeFrom != "" {
		out.Mode, out.modeFrom = top.Mode, top.modeFrom
	}
	if top.writeFrom != "" {
		out.Write, out.writeFrom = slices.Clone(top.Write), top.writeFrom
	}
	if top.denyReadFrom != "" {
		out.DenyRead, out.denyReadFrom = slices.Clone(top.DenyRead), top.denyReadFrom
	}
	if top.networkFrom != "" {
		out.Network, out.networkFrom = top.Network, top.networkFrom
	}
	return out
}

// withDefaults fills the mode and network that nothing set.
func (s Sandbox) withDefaults(mode string) Sandbox {
	if s.Mode == "" {
		s.Mode = mode
	}
	if s.Network == "" {
		s.Network = DefaultSandboxNetwork
	}
	return s
}

// LoopSandbox is the confinement of `ralph loop`'s agents: the top-level
// section, its mode off unless set (a person runs the loop and watches
// it), its network allow unless set.
func (c *Config) LoopSandbox() Sandbox {
	return c.Sandbox.withDefaults(DefaultLoopSandboxMode)
}

// SlotSandbox is the confinement of the agents of the autopilot's slots and
// of a cluster worker's loops: autopilot.sandbox laid over the top-level
// section, its mode auto unless either sets it (the slots run
// unattended), its network allow unless set.
func (c *Config) SlotSandbox() Sandbox {
	return c.Sandbox.over(c.Autopilot.Sandbox).withDefaults(DefaultSlotSandboxMode)
}

// ForHat is s, a loop's confinement (LoopSandbox or SlotSandbox), with the
// keys h's own sandbox: sets laid over it: a hat that says only
// `network: deny` keeps the loop's mode and paths.
func (s Sandbox) ForHat(h Hat) Sandbox {
	if h.Sandbox == nil {
		return s.over(Sandbox{})
	}
	return s.over(*h.Sandbox)
}

// HatSandbox is the confinement of hat h's agent under `ralph loop`:
// LoopSandbox with the hat's section over it.
func (c *Config) HatSandbox(h Hat) Sandbox {
	return c.LoopSandbox().ForHat(h)
}

// sandbox decodes a sandbox: section into dst.
func (l *loader) sandbox(dst *Sandbox) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		l.section(n, path, l.sandboxFields(dst), nil)
	}
}

func (l *loader) sandboxFields(s *Sandbox) []field {
	return []field{
		{"mode", l.setSandboxChoice(&s.Mode, &s.modeFrom, SandboxModes,
			"auto picks the strongest sandbox this machine has; off runs the agent unconfined")},
		{"write", l.setSandboxPaths(&s.Write, &s.writeFrom,
			"an extra path the agent may write, e.g. ~/.cache/go-build")},
		{"deny_read", l.setSandboxPaths(&s.DenyRead, &s.denyReadFrom,
			"a path no agent may read, e.g. ~/.kube")},
		{"network", l.setSandboxChoice(&s.Network, &s.networkFrom, SandboxNetworks,
			"deny leaves the agent only loopback")},
	}
}

// source is "path (file:line)", where a key was set.
func (l *loader) source(n *yaml.Node, path string) string {
	return fmt.Sprintf("%s (%s:%d)", path, l.origin[n], n.Line)
}

// setSandboxChoice decodes a value that must be one of choices, with the
// nearest one suggested when it is not.
func (l *loader) setSandboxChoice(dst, from *string, choices []string, meaning string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		if !slices.Contains(choices, v) {
			hint := "use one of: " + strings.Join(choices, ", ") + "; " + meaning
			if s := suggest.Closest(v, choices); s != "" {
				l.problem(n, hint, "%s: unknown value %q; did you mean %q?", path, v, s)
			} else {
				l.problem(n, hint, "%s: unknown value %q", path, v)
			}
			return
		}
		*dst, *from = v, l.source(n, path)
	}
}

// setSandboxPaths decodes a list of paths (one string is a one-item list),
// each made absolute and clean: ~ and ~/… are under the home directory, a
// relative path is relative to the directory of the file that wrote it
// (left relative, cleaned, in content not on disk, as commands are).
func (l *loader) setSandboxPaths(dst *[]string, from *string, example string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		items := []*yaml.Node{n}
		switch n.Kind {
		case yaml.SequenceNode:
			items = n.Content
		case yaml.ScalarNode:
		case yaml.DocumentNode, yaml.MappingNode, yaml.AliasNode:
			l.problem(n, "write a list of paths, e.g. "+lastKey(path)+": [~/.cache/go-build]",
				"%s: expected a list of paths, got %s", path, describe(n))
			return
		}
		paths := make([]string, 0, len(items))
		ok := true
		for i, item := range items {
			p, good := l.sandboxPath(item, fmt.Sprintf("%s[%d]", path, i), example)
			if good {
				paths = append(paths, p)
			}
			ok = ok && good
		}
		if ok {
			*dst, *from = paths, l.source(n, path)
		}
	}
}

// sandboxPath is one item of a sandbox path list, resolved.
func (l *loader) sandboxPath(n *yaml.Node, path, example string) (string, bool) {
	switch {
	case isNull(n):
		// A bare ~ is YAML's null, which is surely not what was meant.
		l.problem(n, "write "+example+"; quote a lone ~ ('~') to mean the home directory",
			"%s is empty", path)
		return "", false
	case n.Kind != yaml.ScalarNode:
		l.problem(n, "write each path as a string on its own `- ` line",
			"%s: expected a path, got %s", path, describe(n))
		return "", false
	case strings.TrimSpace(n.Value) == "":
		l.problem(n, "write "+example+", or remove the item", "%s is empty", path)
		return "", false
	}
	p, err := l.resolvePath(n, n.Value)
	if err != nil {
		l.problem(n, "write the path in full, or set HOME", "%s: %q: %v", path, n.Value, err)
		return "", false
	}
	return p, true
}

// resolvePath makes p, written in n's file, absolute and clean.
func (l *loader) resolvePath(n *yaml.Node, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %w", err)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("ralph expands ~ and ~/… only, not another user's ~name")
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if dir, onDisk := l.dirs[l.origin[n]]; onDisk {
		return filepath.Join(dir, p), nil
	}
	return filepath.Clean(p), nil
}

// WithMode is s with its mode set to mode by from (a flag, say, for
// Source).
func (s Sandbox) WithMode(mode, from string) Sandbox {
	s.Mode, s.modeFrom = mode, from
	return s
}

// WithoutSandbox returns layers without their sandbox: sections (the
// top-level one, every hat's, autopilot.sandbox), with a line for each one
// it took out ("hats.builder.sandbox (task.yml:9)"). A layer that has none
// is returned as it came; one that had some is written again from its
// parsed form (its comments gone, aliases resolved and the top-level _
// keys that held their anchors with them), named .yml if it was .json. The result, loaded, must configure no sandbox, or it is refused.
//
// A worker passes a task's config files through it whether or not it
// trusts task commands: the sandbox protects the worker's machine from
// the agent, whatever the coordinator meant, so only the worker's own
// config (its -c files) says how its loops are confined. A key-by-key
// rule (keep what narrows, drop what widens) was not chosen: a mode is
// neither narrower nor wider than another, and a task could still make
// its loops fail on a mode the worker lacks. WithoutCommands keeps no
// sandbox: either.
func WithoutSandbox(layers ...Layer) (out []Layer, dropped []string, err error) {
	if _, err := LoadLayers(layers...); err != nil {
		return nil, nil, err
	}
	l := newLoader()
	for _, layer := range layers {
		root := l.parse(layer.Name, layer.Data)
		if root == nil {
			continue
		}
		kept, gone := l.withoutSandbox(root)
		if len(gone) == 0 {
			out = append(out, layer)
			continue
		}
		data, err := yaml.Marshal(kept)
		if err != nil {
			return nil, nil, fmt.Errorf("write %s without its sandbox: %w", layer.Name, err)
		}
		dropped = append(dropped, gone...)
		out = append(out, Layer{Name: yamlName(layer.Name), Data: data})
	}
	if len(l.problems) > 0 {
		return nil, nil, &Error{Problems: l.sortedProblems(), cause: l.cause}
	}
	check, err := LoadLayers(out...)
	if err != nil {
		return nil, nil, fmt.Errorf("the config without its sandbox does not load: %w", err)
	}
	if left := check.sandboxSections(); len(left) > 0 {
		return nil, nil, fmt.Errorf("the config still configures a sandbox once it is taken out: %s", strings.Join(left, ", "))
	}
	return out, dropped, nil
}

// sandboxSections names the sandbox: sections c has.
func (c *Config) sandboxSections() []string {
	var out []string
	if c.Sandbox.Configured() {
		out = append(out, "sandbox")
	}
	for _, h := range c.Hats {
		if h.Sandbox != nil {
			out = append(out, "hats."+h.ID+".sandbox")
		}
	}
	if c.Autopilot.Sandbox.Configured() {
		out = append(out, "autopilot.sandbox")
	}
	return out
}

// withoutSandbox is root, one parsed file, without its sandbox: keys, and
// where each of them was.
func (l *loader) withoutSandbox(root *yaml.Node) (*yaml.Node, []string) {
	var gone []string
	drop := func(m *yaml.Node, path string) *yaml.Node {
		if m.Kind != yaml.MappingNode {
			return m
		}
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: m.Tag, Style: m.Style, Line: m.Line, Column: m.Column}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if k.Value == "sandbox" {
				gone = append(gone, fmt.Sprintf("%s (%s:%d)", l.pathOf(k, path), l.origin[k], k.Line))
				continue
			}
			if path == "" && strings.HasPrefix(k.Value, "_") {
				continue // an anchor's holder: its aliases are resolved already
			}
			out.Content = append(out.Content, m.Content[i], m.Content[i+1])
		}
		return out
	}
	out := drop(root, "")
	for i := 0; i+1 < len(out.Content); i += 2 {
		k, v := out.Content[i], out.Content[i+1]
		switch {
		case k.Value == "autopilot":
			out.Content[i+1] = drop(v, "autopilot")
		case k.Value == "hats" && v.Kind == yaml.MappingNode:
			hats := &yaml.Node{Kind: yaml.MappingNode, Tag: v.Tag, Style: v.Style, Line: v.Line, Column: v.Column}
			for j := 0; j+1 < len(v.Content); j += 2 {
				hats.Content = append(hats.Content, v.Content[j], drop(v.Content[j+1], "hats."+v.Content[j].Value))
			}
			out.Content[i+1] = hats
		}
	}
	return out, gone
}

// yamlName is name with a .json extension made .yml, for content written
// again as YAML.
func yamlName(name string) string {
	if ext := filepath.Ext(name); strings.EqualFold(ext, ".json") {
		return strings.TrimSuffix(name, ext) + ".yml"
	}
	return name
}
