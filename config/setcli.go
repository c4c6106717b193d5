package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// SetCLI rewrites the value of cli.backend in a config file (a preset, for
// ralph init) and adds cli.command and cli.args after it, when cli sets
// them; the other fields of cli are not written. It edits the bytes where
// the YAML node says the value is, rather than re-encoding the tree:
// yaml.v3's encoder keeps comments but drops the blank lines between
// sections and realigns trailing comments, and the presets are meant to be
// read. A file without a cli.backend gets a cli: section at its end.
//
// The result is not loaded: the caller does that, to report a backend
// ralph does not know in its own words. cli.Backend must be a plain word.
func SetCLI(data []byte, cli CLI) ([]byte, error) {
	if !IsPlainWord(cli.Backend) {
		return nil, fmt.Errorf("backend %q: not a backend name", cli.Backend)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse preset: %w", err)
	}
	if node, key, v := backendNode(&doc); v != nil {
		start, end, err := scalarSpan(data, v)
		if err != nil {
			return nil, err
		}
		at, extra := extraCLIKeys(cli, data, node, key, end)
		return slices.Concat(data[:start], []byte(cli.Backend), data[end:at], []byte(extra), data[at:]), nil
	}
	return append(bytes.TrimRight(data, "\n"), []byte("\n\ncli:\n  backend: "+cli.Backend+"\n"+blockCLIKeys(cli, "  "))...), nil
}

// extraCLIKeys is where cli.command and cli.args go, and their text: in a
// block mapping, on the lines after backend's, indented like it; in a flow
// mapping ({backend: claude}), right after backend's value.
func extraCLIKeys(s CLI, data []byte, cli, key *yaml.Node, valueEnd int) (int, string) {
	if cli.Style&yaml.FlowStyle != 0 {
		var b strings.Builder
		if s.Command != "" {
			b.WriteString(", command: " + yamlString(s.Command))
		}
		if len(s.Args) > 0 {
			b.WriteString(", args: " + yamlList(s.Args))
		}
		return valueEnd, b.String()
	}
	at := len(data)
	if i := bytes.IndexByte(data[valueEnd:], '\n'); i >= 0 {
		at = valueEnd + i + 1
	}
	extra := blockCLIKeys(s, strings.Repeat(" ", key.Column-1))
	if at == len(data) && !bytes.HasSuffix(data, []byte("\n")) && extra != "" {
		extra = "\n" + strings.TrimSuffix(extra, "\n")
	}
	return at, extra
}

// blockCLIKeys renders cli.command and cli.args as block mapping lines.
func blockCLIKeys(s CLI, indent string) string {
	var b strings.Builder
	if s.Command != "" {
		b.WriteString(indent + "command: " + yamlString(s.Command) + "\n")
	}
	if len(s.Args) > 0 {
		b.WriteString(indent + "args: " + yamlList(s.Args) + "\n")
	}
	return b.String()
}

// plainScalar is what may go unquoted: a path or a word.
var plainScalar = regexp.MustCompile(`^[A-Za-z0-9_./~][A-Za-z0-9_./~+-]*$`)

// yamlString renders s as a YAML string: plain when YAML reads it back as
// that same string ("./agent.sh"), else double-quoted (JSON's quoting is
// valid YAML), so "true", "1" or "a b" stay strings.
func yamlString(s string) string {
	var v any
	if plainScalar.MatchString(s) && yaml.Unmarshal([]byte(s), &v) == nil && v == s {
		return s
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func yamlList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = yamlString(it)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// IsPlainWord says whether s is a word SetCLI may write unquoted as a
// backend name: letters, digits, - and _.
func IsPlainWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// backendNode is the cli mapping, the key node of cli.backend and its
// value node; nil when the preset has no scalar cli.backend.
func backendNode(doc *yaml.Node) (cli, key, value *yaml.Node) {
	if len(doc.Content) == 0 {
		return nil, nil, nil
	}
	cli = mappingValue(doc.Content[0], "cli")
	if cli == nil || cli.Kind != yaml.MappingNode {
		return nil, nil, nil
	}
	for i := 0; i+1 < len(cli.Content); i += 2 {
		if k, v := cli.Content[i], cli.Content[i+1]; k.Value == "backend" && v.Kind == yaml.ScalarNode {
			return cli, k, v
		}
	}
	return nil, nil, nil
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarSpan is the byte range of a one-line scalar in data, quotes
// included. yaml.v3 gives lines and columns from 1, columns in characters.
func scalarSpan(data []byte, v *yaml.Node) (int, int, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if v.Line < 1 || v.Line > len(lines) {
		return 0, 0, fmt.Errorf("cli.backend: line %d is outside the preset", v.Line)
	}
	offset := 0
	for _, l := range lines[:v.Line-1] {
		offset += len(l)
	}
	line := lines[v.Line-1]
	col := 0
	for i := 1; i < v.Column && col < len(line); i++ {
		_, size := utf8.DecodeRune(line[col:])
		col += size
	}
	rest := line[col:]
	n := len(v.Value)
	if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		end := bytes.IndexByte(rest[1:], rest[0])
		if end < 0 {
			return 0, 0, fmt.Errorf("cli.backend on line %d: unterminated quote", v.Line)
		}
		n = end + 2
	}
	if !bytes.HasPrefix(rest, []byte(v.Value)) && v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		return 0, 0, fmt.Errorf("cli.backend on line %d: cannot find %q", v.Line, v.Value)
	}
	return offset + col, offset + col + n, nil
}
