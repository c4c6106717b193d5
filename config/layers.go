package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// UserFileName is the user's own config, in ralph's directory of the
// user's config directory (see [UserFile]).
const UserFileName = "config.yml"

// SetFlag is the flag whose assignments [Options.Sets] holds; problems in
// one are placed at "--set KEY" instead of a file:line.
const SetFlag = "--set"

// Options are the layers a command lays around the project's config files:
// the user's own file under them, --set assignments over them (and over a
// hat collection). The zero value adds nothing.
type Options struct {
	// User is the user's own config file (see [UserFile]), laid under
	// every project file, so that what a project sets wins. "" or a file
	// that does not exist adds nothing.
	User string
	// Sets are --set key.path=value assignments, laid over everything
	// in order, later over earlier. The value is YAML, so a number, a
	// boolean, [a, b] or {k: v} mean what they mean in the file; an empty
	// value is the empty string.
	Sets []string
}

// UserFile is where the user's own config is: $XDG_CONFIG_HOME/ralph/
// config.yml when XDG_CONFIG_HOME is set (on every system, since people
// who set it mean it), else ralph/config.yml in os.UserConfigDir:
// ~/.config on Linux and the BSDs, ~/Library/Application Support on macOS,
// %AppData% on Windows. getenv is os.Getenv, passed in by the command line.
// It returns "" when the system has no such directory.
func UserFile(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		// The XDG spec says a relative value is to be ignored.
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(dir, "ralph", UserFileName)
}

// userLayer parses the user's config into its top-level mapping; nil when
// there is none. A file that cannot be read is a problem, as a project
// file's would be.
func (l *loader) userLayer(path string) *yaml.Node {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		l.files = append(l.files, path)
		l.problems = append(l.problems, Problem{File: path, Msg: "read the user config: " + pathReason(err),
			Hint: "check the file's permissions, or move it away: it is optional"})
		return nil
	}
	l.onDisk(path, "")
	l.user = path
	return l.parse(path, data)
}

// setLayers parses the --set assignments into one top-level mapping each,
// to merge over the config in order.
func (l *loader) setLayers(sets []string) []*yaml.Node {
	var out []*yaml.Node
	for _, s := range sets {
		if n := l.setLayer(s); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// setLayer turns one key.path=value into the mapping a file with that one
// key would be, named "--set key.path" for messages and with no lines: the
// place to look is the command line, not a line of a file.
func (l *loader) setLayer(s string) *yaml.Node {
	key, value, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	name := SetFlag + " " + key
	l.files = append(l.files, name)
	const hint = "write --set key.path=value, e.g. --set event_loop.max_iterations=10"
	if !ok || key == "" {
		l.problems = append(l.problems, Problem{File: SetFlag + " " + s, Msg: "expected key.path=value", Hint: hint})
		return nil
	}
	parts := strings.Split(key, ".")
	for _, p := range parts {
		if p == "" {
			l.problems = append(l.problems, Problem{File: name, Msg: "the key has an empty part between dots", Hint: hint})
			return nil
		}
	}
	v := l.setValue(name, value)
	if v == nil {
		return nil
	}
	for i := len(parts) - 1; i >= 0; i-- {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: parts[i]}
		l.origin[k] = name
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{k, v}}
		l.origin[m] = name
		v = m
	}
	return l.normalize(v)
}

// setValue parses the value of a --set as YAML (a scalar, or a flow list or
// mapping); nil when it is not YAML, which is a problem.
func (l *loader) setValue(name, value string) *yaml.Node {
	if strings.TrimSpace(value) == "" {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
		l.origin[n] = name
		return n
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) == 0 {
		msg := "the value is not YAML"
		if err != nil {
			msg += ": " + yamlReason(err)
		}
		l.problems = append(l.problems, Problem{File: name, Msg: msg,
			Hint: "quote the value for your shell, e.g. --set 'cli.args=[--model, opus]' or --set 'event_loop.prompt=\"a: b\"'"})
		return nil
	}
	l.copied = 0
	v := l.copyNode(name, doc.Content[0])
	withoutLines(v)
	return v
}

// withoutLines clears the lines of a tree parsed from a --set value, so
// that its problems name the flag alone.
func withoutLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		withoutLines(c)
	}
}

// yamlReason is what yaml.v3 says is wrong, without its "yaml: line 1:"
// prefix: a --set value has no lines.
func yamlReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if _, what, ok := strings.Cut(rest, ": "); ok {
			return what
		}
	}
	return msg
}

// LayerSets is prev, the --set a run remembers, with now laid over it, in
// order, an assignment made again later dropped where it was first: a
// resume, or a supervisor that starts an unfinished autopilot again, with
// the same --set would otherwise make the remembered list grow each time.
// The value each key ends with is the same.
func LayerSets(prev, now []string) []string {
	all := slices.Concat(prev, now)
	out := make([]string, 0, len(all))
	for i, s := range all {
		if !slices.Contains(all[i+1:], s) {
			out = append(out, s)
		}
	}
	return out
}
