package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds the nodes one file may expand to once its aliases are
// resolved, so that a file of nested aliases cannot exhaust memory.
const maxNodes = 100_000

// loader holds the state of one Load: which file every node came from, and
// the problems and ignored keys found so far.
//
// Files are parsed into yaml.Node trees, copied with aliases resolved, their
// flat keys moved into sections (normalize.go), merged, and only then
// decoded (decode.go). origin remembers each node's file across those steps,
// because yaml.Node only knows its line.
type loader struct {
	files    []string
	origin   map[*yaml.Node]string
	aliasOf  map[*yaml.Node]string // key node moved by normalize → the name the user wrote
	problems []Problem
	ignored  []ignoredKey
	triggers []triggerSite
	cause    error // first error worth errors.Is, see Error.cause
	copied   int   // nodes copied from the current file, see maxNodes
	// dirs maps a file on disk to the directory its relative commands
	// resolve against; content with no file behind it (LoadBytes) is not
	// in it, and its commands are left as written.
	dirs map[string]string
	// pathCriteria are the criteria that read a file, for
	// Config.CriteriaProblems.
	pathCriteria []placedCriterion
	// user is the user's own config file when it was read, so that
	// what it set is told apart from the project's (Config.Explain).
	user string
	// toolSites are where disallowed_tools and the hats' backends were
	// written, for checkToolDenial's messages (see tools.go).
	toolSites map[string]*yaml.Node
}

// ignoredKey is a ralph-orchestrator key ralph accepts without implementing.
type ignoredKey struct {
	file string
	path string
	line int
}

func newLoader() *loader {
	return &loader{
		origin:    map[*yaml.Node]string{},
		toolSites: map[string]*yaml.Node{},
		aliasOf:   map[*yaml.Node]string{},
		dirs:      map[string]string{},
	}
}

// onDisk records that file name is on disk in dir, or next to name when
// dir is "".
func (l *loader) onDisk(name, dir string) {
	if dir == "" {
		dir = filepath.Dir(name)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	l.dirs[name] = dir
}

// at is the position of n.
func (l *loader) at(n *yaml.Node) pos { return pos{file: l.origin[n], line: n.Line} }

// problem records a problem at node n.
func (l *loader) problem(n *yaml.Node, hint, format string, args ...any) {
	l.problems = append(l.problems, Problem{
		File: l.origin[n], Line: n.Line, Msg: fmt.Sprintf(format, args...), Hint: hint,
	})
}

// parse reads one file into its top-level mapping, copied so that it holds
// no aliases and every node is in origin. It returns nil when the file has
// nothing to merge; the reason is recorded as a problem.
func (l *loader) parse(name string, data []byte) *yaml.Node {
	l.files = append(l.files, name)
	l.copied = 0
	isJSON := strings.EqualFold(filepath.Ext(name), ".json")
	if isJSON {
		data = yamlSafeJSON(data)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		l.problems = append(l.problems, syntaxProblem(name, err, isJSON))
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		l.problems = append(l.problems, Problem{
			File: name, Msg: "the file is empty",
			Hint: "write at least the objective, e.g. event_loop: {prompt: \"…\"}, or run `ralph init`",
		})
		return nil
	}
	l.checkOneDocument(name, dec)
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.problems = append(l.problems, Problem{
			File: name, Line: root.Line, Msg: "expected keys such as event_loop: and hats: at the top, got " + describe(root),
			Hint: "start the file with `event_loop:`, `cli:` or `hats:` at the beginning of a line",
		})
		return nil
	}
	return l.normalize(l.copyNode(name, root))
}

// yamlSafeJSON rewrites, in the strings of a valid JSON file, what JSON
// allows and YAML does not, so that a ralph.json reads as any JSON reader
// reads it:
//
//   - UTF-16 surrogate escapes. JSON writers escape characters outside the
//     Basic Multilingual Plane as a pair, "\ud83d\ude00" for 😀 (Python's
//     json.dump does so by default), which yaml.v3 rejects; YAML writes it
//     "\U0001F600". A lone surrogate becomes "\uFFFD", as encoding/json
//     reads it.
//   - Characters YAML does not allow in a file (DEL, the C1 controls but
//     NEL, U+FFFE, U+FFFF), which JSON allows unescaped: they are escaped.
//   - Bytes that are not UTF-8: "\uFFFD", as encoding/json reads them.
//
// Anything that is not valid JSON is returned as is, to be reported as YAML
// would; no line changes, so every problem stays where it was.
func yamlSafeJSON(data []byte) []byte {
	if !json.Valid(data) {
		return data
	}
	var out []byte // nil until something needs rewriting
	inString := false
	for i := 0; i < len(data); {
		c, size := data[i], 1
		var repl []byte
		switch {
		case c == '"':
			inString = !inString
		case !inString:
		case c == '\\' && data[i+1] == 'u': // valid JSON: four hex digits follow
			size = 6
			r := hex4(data[i+2 : i+6])
			switch {
			case utf16.IsSurrogate(r) && i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u' &&
				utf16.DecodeRune(r, hex4(data[i+8:i+12])) != utf8.RuneError:
				size = 12
				repl = fmt.Appendf(nil, `\U%08X`, utf16.DecodeRune(r, hex4(data[i+8:i+12])))
			case utf16.IsSurrogate(r):
				repl = []byte(`\uFFFD`)
			}
		case c == '\\':
			size = 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(data[i:])
			size = n
			switch {
			case r == utf8.RuneError && n == 1:
				repl = []byte(`\uFFFD`)
			case !yamlAllows(r):
				repl = fmt.Appendf(nil, `\u%04X`, r)
			}
		case c == 0x7f:
			repl = []byte(`\u007F`)
		}
		if repl != nil && out == nil {
			out = append(make([]byte, 0, len(data)+16), data[:i]...)
		}
		switch {
		case repl != nil:
			out = append(out, repl...)
		case out != nil:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return data
	}
	return out
}

// yamlAllows reports whether a YAML file may hold r as it is (YAML 1.2,
// 5.1; yaml.v3's reader checks the same set).
func yamlAllows(r rune) bool {
	return r == 0x09 || r == 0x0a || r == 0x0d || r >= 0x20 && r <= 0x7e || r == 0x85 ||
		r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= utf8.MaxRune
}

// hex4 reads the four hex digits of a JSON \u escape.
func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// checkOneDocument reports a second YAML document: ralph would otherwise
// ignore it without a word.
func (l *loader) checkOneDocument(name string, dec *yaml.Decoder) {
	var next yaml.Node
	err := dec.Decode(&next)
	switch {
	case errors.Is(err, io.EOF):
	case err != nil:
		l.problems = append(l.problems, syntaxProblem(name, err, false))
	default:
		l.problems = append(l.problems, Problem{
			File: name, Line: next.Line, Msg: "a second YAML document starts here",
			Hint: "ralph reads one document per file: remove the `---` line, or split it into files and pass each with -c",
		})
	}
}

// syntaxProblem turns a yaml.v3 parse error into a problem. yaml.v3 has no
// typed syntax error; its text is "yaml: line N: what", the only place the
// line is, so it is taken apart here.
func syntaxProblem(name string, err error, isJSON bool) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, what, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, what
			}
		}
	}
	if line > 0 && slices.Contains(yamlParserProblems, msg) {
		// yaml.v3 (decode.go, parser.fail) counts lines from 0 for the
		// parser's errors and from 1 for the scanner's.
		line++
	}
	p := Problem{File: name, Line: line, Msg: "invalid YAML: " + msg,
		Hint: "check the indentation (spaces, not tabs) and the quoting on this line and the one before"}
	if isJSON {
		p.Msg = "invalid JSON: " + msg
		p.Hint = "check for a missing comma, quote or brace on this line or the one before"
	}
	return p
}

// yamlParserProblems are the messages of yaml.v3's parser (parserc.go), as
// opposed to its scanner; see syntaxProblem.
var yamlParserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// copyNode copies n deeply, resolving aliases and merge keys (<<), and
// records each copy's file. Copying means later steps can build new trees
// without ever changing a node that an alias shares.
func (l *loader) copyNode(file string, n *yaml.Node) *yaml.Node {
	l.copied++
	if l.copied == maxNodes {
		// n is the file's own node, not a copy, so origin does not know it.
		l.problems = append(l.problems, Problem{File: file, Line: n.Line,
			Msg: fmt.Sprintf("the file expands to more than %d values", maxNodes), Hint: "use fewer nested aliases"})
	}
	if l.copied >= maxNodes {
		return l.null(file, n)
	}
	var c *yaml.Node
	switch n.Kind {
	case yaml.AliasNode:
		return l.copyNode(file, n.Alias)
	case yaml.MappingNode:
		c = l.copyMapping(file, n)
	case yaml.SequenceNode:
		c = &yaml.Node{Kind: n.Kind, Tag: n.Tag, Style: n.Style, Line: n.Line, Column: n.Column}
		for _, item := range n.Content {
			c.Content = append(c.Content, l.copyNode(file, item))
		}
	default:
		cc := *n
		cc.Content, cc.Anchor, cc.Alias = nil, "", nil
		cc.HeadComment, cc.LineComment, cc.FootComment = "", "", ""
		c = &cc
	}
	l.origin[c] = file
	return c
}

// null is an empty value standing in for n.
func (l *loader) null(file string, n *yaml.Node) *yaml.Node {
	c := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
	l.origin[c] = file
	return c
}

// copyMapping copies a mapping, reporting keys that appear twice (yaml.v3
// only does so when decoding into Go values) and laying merge keys under
// the mapping's own keys, as YAML's << means.
func (l *loader) copyMapping(file string, n *yaml.Node) *yaml.Node {
	c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Style: n.Style, Line: n.Line, Column: n.Column}
	l.origin[c] = file
	seen := map[string]*yaml.Node{}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			merged = append(merged, l.mergeSources(file, v)...)
			continue
		}
		kc := l.copyNode(file, k)
		if kc.Kind != yaml.ScalarNode {
			l.problem(kc, "use a plain word as the key", "a key must be a plain word, got %s", describe(kc))
			continue
		}
		if first, dup := seen[kc.Value]; dup {
			l.problem(kc, "remove one of them", "key %q appears twice, on lines %d and %d", kc.Value, first.Line, kc.Line)
			continue
		}
		seen[kc.Value] = kc
		c.Content = append(c.Content, kc, l.copyNode(file, v))
	}
	for i := 0; i+1 < len(merged); i += 2 {
		if _, own := seen[merged[i].Value]; !own {
			seen[merged[i].Value] = merged[i]
			c.Content = append(c.Content, merged[i], merged[i+1])
		}
	}
	return c
}

// mergeSources copies the key/value pairs a << merge key brings in: one
// mapping, or a list of them, earlier ones winning.
func (l *loader) mergeSources(file string, v *yaml.Node) []*yaml.Node {
	src := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		src = v.Content
	}
	var pairs []*yaml.Node
	seen := map[string]bool{}
	for _, s := range src {
		m := l.copyNode(file, s)
		if m.Kind != yaml.MappingNode {
			l.problem(m, "merge a mapping, e.g. <<: *defaults", "<< expects a mapping, got %s", describe(m))
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if !seen[m.Content[i].Value] {
				seen[m.Content[i].Value] = true
				pairs = append(pairs, m.Content[i], m.Content[i+1])
			}
		}
	}
	return pairs
}

// merge lays b over a: mappings merge key by key, anything else in b
// replaces a. An empty (null) b leaves a alone, so that a later file's bare
// `event_loop:` with everything commented out does not wipe the section.
// Neither tree is changed; merged mappings are new nodes.
func (l *loader) merge(a, b *yaml.Node) *yaml.Node {
	switch {
	case a == nil:
		return b
	case b == nil || isNull(b):
		return a
	case a.Kind != yaml.MappingNode || b.Kind != yaml.MappingNode:
		return b
	}
	c := &yaml.Node{Kind: yaml.MappingNode, Tag: a.Tag, Line: a.Line, Column: a.Column}
	l.origin[c] = l.origin[a]
	index := map[string]int{}
	for i := 0; i+1 < len(a.Content); i += 2 {
		index[a.Content[i].Value] = i + 1
		c.Content = append(c.Content, a.Content[i], a.Content[i+1])
	}
	for i := 0; i+1 < len(b.Content); i += 2 {
		if j, ok := index[b.Content[i].Value]; ok {
			c.Content[j] = l.merge(c.Content[j], b.Content[i+1])
			continue
		}
		c.Content = append(c.Content, b.Content[i], b.Content[i+1])
	}
	return c
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names what a node holds, for "expected X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode, yaml.ScalarNode, yaml.AliasNode:
		// Described by its tag and value, below.
	}
	switch n.Tag {
	case "!!str":
		return strconv.Quote(n.Value)
	case "!!null":
		return "nothing"
	}
	return n.Value
}
