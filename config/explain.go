package config

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/internal/redact"
)

// layered is what a config's layers made of it, for ralph config show:
// the merged tree over the defaults, each value commented with where it
// came from, and the same as a list. It is worked out while the loader
// still knows each node's layer, and holds no pointer into the loader, so
// that two loads of the same files are equal.
type layered struct {
	tree   *yaml.Node
	values []Value
}

// The kinds of place a value comes from ([Value.Kind]).
const (
	FromFile    = "file"    // a project file given with -c, or found
	FromUser    = "user"    // the user's own config (UserFile)
	FromSet     = "set"     // a --set assignment
	FromDefault = "default" // no layer set it
)

// Value is one value of a merged config and where it came from. A list is
// one value, as a later layer replaces it whole; a mapping is not, since
// layers merge into it key by key.
type Value struct {
	// Path is the dotted key: event_loop.max_iterations, hats.builder.triggers.
	Path string `json:"path"`
	// Value is what YAML makes of it: a string, number, boolean or list.
	Value any `json:"value"`
	// Kind is FromFile, FromUser, FromSet or FromDefault.
	Kind string `json:"kind"`
	// File is the file that set it, or "--set KEY"; "" for a default.
	File string `json:"file,omitempty"`
	// Line is the line of File, 0 when there is none.
	Line int `json:"line,omitempty"`
}

// Source is where v came from in words: file:line, --set KEY, or default.
func (v Value) Source() string {
	switch {
	case v.Kind == FromDefault:
		return FromDefault
	case v.Line > 0:
		return v.File + ":" + strconv.Itoa(v.Line)
	default:
		return v.File
	}
}

// Explain lists every value of the merged config (see [Config.ExplainedYAML])
// in its order, each with where it came from.
func (c *Config) Explain() []Value { return slices.Clone(c.layered.values) }

// ExplainedYAML is the merged config as YAML: what its layers set, in the
// order the files give it, then the defaults of the keys none set, with
// the values of environment variables whose names (or values) look secret
// hidden. With explain, each value is followed by a comment saying where
// it came from, its file as name says it (name may shorten paths). The
// keys are the sections' own (a v1 flat key appears in its section); what
// decoding derives (a hat's backend from cli:) is not spelt out.
func (c *Config) ExplainedYAML(explain bool, name func(file string) string) []byte {
	if c.layered.tree == nil {
		return []byte("{}\n")
	}
	root := copyTree(c.layered.tree)
	if explain {
		values := slices.Clone(c.layered.values)
		comment(root, nil, &values, name)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		panic("config: encode the merged config: " + err.Error()) // a tree yaml.v3 parsed
	}
	return b.Bytes()
}

// explained works out c.layered from the merged tree root.
func (l *loader) explained(root *yaml.Node) layered {
	tree := l.hideSecrets(withDefaults(root, defaultsTree()), "")
	var values []Value
	l.collect(tree, nil, "", &values)
	return layered{tree: tree, values: values}
}

// withDefaults is mapping root with what defaults has and root lacks
// added after root's own keys, which keep their order and win.
func withDefaults(root, defaults *yaml.Node) *yaml.Node {
	if root == nil {
		return defaults
	}
	if root.Kind != yaml.MappingNode || defaults.Kind != yaml.MappingNode {
		return root
	}
	c := *root
	c.Content = slices.Clone(root.Content)
	for i := 0; i+1 < len(defaults.Content); i += 2 {
		k, v := defaults.Content[i], defaults.Content[i+1]
		j := slices.IndexFunc(c.Content, func(n *yaml.Node) bool { return n.Value == k.Value })
		switch {
		case j < 0 || j%2 == 1:
			c.Content = append(c.Content, k, v)
		default:
			c.Content[j+1] = withDefaults(c.Content[j+1], v)
		}
	}
	return &c
}

// collect appends each value under n (at path, under key) to out, with
// where it came from.
func (l *loader) collect(n, key *yaml.Node, path string, out *[]Value) {
	if n.Kind == yaml.MappingNode && len(n.Content) > 0 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			sub := n.Content[i].Value
			if path != "" {
				sub = path + "." + sub
			}
			l.collect(n.Content[i+1], n.Content[i], sub, out)
		}
		return
	}
	var v any
	if err := n.Decode(&v); err != nil {
		v = n.Value
	}
	val := Value{Path: path, Value: v}
	val.Kind, val.File, val.Line = l.from(n, key)
	*out = append(*out, val)
}

// comment puts where each value under n came from (the next of values, in
// collect's order) in a comment after it.
func comment(n, key *yaml.Node, values *[]Value, name func(string) string) {
	if n.Kind == yaml.MappingNode && len(n.Content) > 0 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			comment(n.Content[i+1], n.Content[i], values, name)
		}
		return
	}
	v := (*values)[0]
	*values = (*values)[1:]
	if v.File != "" && name != nil && v.Kind != FromSet {
		v.File = name(v.File)
	}
	switch {
	case key == nil:
	case n.Kind == yaml.ScalarNode || n.Style&yaml.FlowStyle != 0 || len(n.Content) == 0:
		n.LineComment = v.Source()
	default:
		key.LineComment = v.Source() // a block list: the comment goes after its key
	}
}

// copyTree is a deep copy of n, to comment without changing the original.
func copyTree(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, sub := range n.Content {
		c.Content[i] = copyTree(sub)
	}
	return &c
}

// from is where value n (under key) came from. A value's own line is where
// it is written; a block list or mapping starts on the line after its key,
// so the key's line is the one to give.
func (l *loader) from(n, key *yaml.Node) (kind, file string, line int) {
	file = l.origin[n]
	switch {
	case file == "":
		return FromDefault, "", 0
	case strings.HasPrefix(file, SetFlag+" "):
		return FromSet, file, 0
	case file == l.user:
		kind = FromUser
	default:
		kind = FromFile
	}
	line = n.Line
	if key != nil && l.origin[key] == file && key.Line > 0 {
		line = key.Line
	}
	return kind, file, line
}

// defaultsTree is the defaults of the sections that have some, as a YAML
// tree whose nodes no layer claims; empty values say nothing and are left
// out.
func defaultsTree() *yaml.Node {
	d := Default()
	sections := []struct {
		key string
		v   any
	}{
		{"event_loop", d.EventLoop}, {"cli", d.CLI}, {"memories", d.Memories},
		{"human", d.Human}, {"autopilot", d.Autopilot},
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, s := range sections {
		var n yaml.Node
		if err := n.Encode(s.v); err != nil {
			panic(fmt.Sprintf("config: encode the defaults of %s: %v", s.key, err))
		}
		if v := withoutEmpty(&n); v != nil {
			root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.key}, v)
		}
	}
	return root
}

// withoutEmpty is n without its empty strings, lists and mappings; nil
// when nothing is left.
func withoutEmpty(n *yaml.Node) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		var pairs []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := withoutEmpty(n.Content[i+1]); v != nil {
				pairs = append(pairs, n.Content[i], v)
			}
		}
		if len(pairs) == 0 {
			return nil
		}
		n.Content = pairs
		return n
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return nil
		}
	case yaml.ScalarNode:
		if n.Value == "" || n.Tag == "!!null" {
			return nil
		}
	case yaml.DocumentNode, yaml.AliasNode:
	}
	return n
}

// hideSecrets is n with the values of the environment variables under an
// env: key (cli.env, a hat backend's env) hidden where the variable's name,
// or its value, looks secret, as ralph hides them in what it writes. The
// nodes that change are copies from the same layer: n's own tree is left
// alone.
func (l *loader) hideSecrets(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	c := *n
	l.origin[&c] = l.origin[n]
	c.Content = make([]*yaml.Node, len(n.Content))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		c.Content[i] = k
		switch {
		case key == "env" && v.Kind == yaml.ScalarNode:
			vc := *v
			l.origin[&vc] = l.origin[v]
			vc.Value, vc.Tag, vc.Style = hiddenEnv(k.Value, v.Value), "!!str", 0
			c.Content[i+1] = &vc
		default:
			c.Content[i+1] = l.hideSecrets(v, k.Value)
		}
	}
	return &c
}

// hiddenEnv is the value of environment variable name as config show
// prints it: hidden whole when the name looks secret, whatever its length,
// else with what the redactor hides of it (a URL's password).
func hiddenEnv(name, value string) string {
	if redact.IsSecretName(name) && value != "" {
		return redact.Mask(name)
	}
	return redact.New([]string{name + "=" + value}, nil).String(value)
}
