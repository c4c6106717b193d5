package linear

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The fake reads a GraphQL document only as far as it needs: the
// operation's kind and name, and its selection set, whose fields' names,
// arguments and sub-selections decide what an answer holds. Variable
// definitions are skipped: the variables themselves are read from the
// request.

// document is one parsed operation.
type document struct {
	kind string // query or mutation
	name string
	sel  []*field
}

// field is one selected field.
type field struct {
	alias, name string
	args        map[string]any
	sel         []*field
}

func (f *field) key() string {
	if f.alias != "" {
		return f.alias
	}
	return f.name
}

type parser struct {
	toks []string
	i    int
	vars map[string]any
}

// parseDocument parses src, with vars as the values of its $variables.
func parseDocument(src string, vars map[string]any) (*document, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, vars: vars}
	d := &document{kind: "query"}
	if t := p.peek(); t == "query" || t == "mutation" {
		d.kind = p.next()
		if t := p.peek(); t != "{" && t != "(" {
			d.name = p.next()
		}
		if p.peek() == "(" {
			if err := p.skipBalanced("(", ")"); err != nil {
				return nil, err
			}
		}
	}
	if d.sel, err = p.selectionSet(); err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q after the operation (the fake reads one operation a document)", p.peek())
	}
	return d, nil
}

func (p *parser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *parser) next() string {
	t := p.peek()
	p.i++
	return t
}

func (p *parser) expect(t string) error {
	if got := p.next(); got != t {
		return fmt.Errorf("expected %q, found %q", t, got)
	}
	return nil
}

func (p *parser) skipBalanced(open, closing string) error {
	depth := 0
	for p.i < len(p.toks) {
		switch p.next() {
		case open:
			depth++
		case closing:
			if depth--; depth == 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("unbalanced %q", open)
}

func (p *parser) selectionSet() ([]*field, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var sel []*field
	for p.peek() != "}" {
		if p.peek() == "" || p.peek() == "..." {
			return nil, fmt.Errorf("unexpected %q in a selection set (the fake reads no fragments)", p.peek())
		}
		f := &field{name: p.next()}
		if p.peek() == ":" {
			p.next()
			f.alias, f.name = f.name, p.next()
		}
		if p.peek() == "(" {
			args, err := p.arguments()
			if err != nil {
				return nil, err
			}
			f.args = args
		}
		if p.peek() == "{" {
			sub, err := p.selectionSet()
			if err != nil {
				return nil, err
			}
			f.sel = sub
		}
		sel = append(sel, f)
	}
	p.next()
	return sel, nil
}

func (p *parser) arguments() (map[string]any, error) {
	p.next()
	args := map[string]any{}
	for p.peek() != ")" {
		name := p.next()
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		args[name] = v
	}
	p.next()
	return args, nil
}

func (p *parser) value() (any, error) {
	t := p.next()
	switch {
	case t == "$":
		return p.vars[p.next()], nil
	case t == "[":
		list := []any{}
		for p.peek() != "]" {
			if p.peek() == "" {
				return nil, fmt.Errorf("unbalanced [")
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		p.next()
		return list, nil
	case t == "{":
		obj := map[string]any{}
		for p.peek() != "}" {
			name := p.next()
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			obj[name] = v
		}
		p.next()
		return obj, nil
	case strings.HasPrefix(t, `"`):
		var s string
		err := json.Unmarshal([]byte(t), &s)
		return s, err
	case t == "true" || t == "false":
		return t == "true", nil
	case t == "null":
		return nil, nil
	}
	if n, err := strconv.ParseFloat(t, 64); err == nil {
		return n, nil
	}
	return t, nil // an enum value, such as createdAt
}

// lex splits src into GraphQL's tokens: punctuators, names, numbers and
// strings (block strings are not read); commas and comments are skipped.
func lex(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "..."):
			toks = append(toks, "...")
			i += 3
		case strings.ContainsRune("{}()[]:$!=@", rune(c)):
			toks = append(toks, string(c))
			i++
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("a string that does not end")
			}
			toks = append(toks, src[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\n\r,#{}()[]:$!=@\"", rune(src[j])) {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		}
	}
	return toks, nil
}

// typename is the key under which the fake keeps an object's GraphQL
// type, for __typename and for the errors that name it.
const typename = "__typename"

// project is v as the selection sel asks for it: only the fields
// selected, under their aliases; a connection's nodes cut to the first
// the field asks for. A field the object has not is the error GraphQL
// gives for a field its type has not: the fixtures hold the real types'
// fields, so a query for any other is refused as Linear would.
func project(v any, sel []*field) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			p, err := project(e, sel)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	case map[string]any:
		if sel == nil {
			return nil, fmt.Errorf("field of type %q must have a selection of subfields", v[typename])
		}
		out := map[string]any{}
		for _, f := range sel {
			if f.name == typename {
				out[f.key()] = v[typename]
				continue
			}
			fv, ok := v[f.name]
			if !ok {
				return nil, fmt.Errorf("cannot query field %q on type %q", f.name, v[typename])
			}
			fv = firstOf(fv, f.args)
			p, err := project(fv, f.sel)
			if err != nil {
				return nil, err
			}
			out[f.key()] = p
		}
		return out, nil
	}
	if sel != nil {
		return nil, fmt.Errorf("a scalar has no subfields (%v)", names(sel))
	}
	return v, nil
}

// firstOf is the connection v with no more nodes than args' first.
func firstOf(v any, args map[string]any) any {
	conn, ok := v.(map[string]any)
	first, has := args["first"].(float64)
	nodes, isConn := conn["nodes"].([]any)
	if !ok || !has || !isConn || len(nodes) <= int(first) {
		return v
	}
	cut := clone(conn).(map[string]any)
	cut["nodes"] = slices.Clone(nodes[:int(first)])
	if info, ok := cut["pageInfo"].(map[string]any); ok {
		info["hasNextPage"] = true
	}
	return cut
}

func names(sel []*field) []string {
	var out []string
	for _, f := range sel {
		out = append(out, f.name)
	}
	return out
}

// clone is a deep copy of JSON-shaped v.
func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clone(e)
		}
		return out
	}
	return v
}
