// Package jsonschema checks a decoded YAML or JSON document against the
// subset of JSON Schema (draft 2020-12) that ralph's own schema uses, so
// that tests can hold the schema to the files it describes without a
// dependency: type, enum, minimum, pattern, properties,
// patternProperties, additionalProperties, propertyNames, required, items,
// anyOf, oneOf and local $ref ("#/$defs/NAME"). Annotations (description,
// default, deprecated, title, $id, $schema) are ignored; any other keyword
// is an error, so the schema cannot quietly use more than is checked.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Schema is a parsed schema document.
type Schema struct {
	root map[string]any
}

// Parse reads a JSON Schema document.
func Parse(data []byte) (*Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	return &Schema{root: root}, nil
}

// Validate checks doc (as decoded by yaml.v3 or encoding/json into any)
// and returns every violation, each as "path: what", in document order.
func (s *Schema) Validate(doc any) []string {
	v := &validator{root: s.root}
	v.check(s.root, normalize(doc), "$")
	return v.errs
}

type validator struct {
	root map[string]any
	errs []string
}

var annotations = []string{"description", "default", "deprecated", "title", "$id", "$schema", "$defs", "examples"}

func (v *validator) fail(path, format string, args ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, args...))
}

// check validates value at path against schema sch.
func (v *validator) check(sch map[string]any, value any, path string) {
	for _, k := range sortedKeys(sch) {
		switch k {
		case "$ref":
			v.check(v.resolve(sch[k].(string)), value, path)
		case "type":
			v.checkType(sch[k], value, path)
		case "enum":
			if !slices.ContainsFunc(sch[k].([]any), func(e any) bool { return equal(e, value) }) {
				v.fail(path, "%s is not one of %s", show(value), show(sch[k]))
			}
		case "minimum":
			if n, ok := value.(float64); ok && n < sch[k].(float64) {
				v.fail(path, "%s is less than the minimum %s", show(value), show(sch[k]))
			}
		case "pattern":
			if s, ok := value.(string); ok && !regexp.MustCompile(sch[k].(string)).MatchString(s) {
				v.fail(path, "%q does not match %s", s, sch[k])
			}
		case "items":
			if arr, ok := value.([]any); ok {
				for i, item := range arr {
					v.check(sch[k].(map[string]any), item, fmt.Sprintf("%s[%d]", path, i))
				}
			}
		case "anyOf", "oneOf":
			v.checkAlternatives(k, sch[k].([]any), value, path)
		case "properties", "patternProperties", "additionalProperties", "propertyNames", "required":
			// checkObject handles them together, once.
		default:
			if !slices.Contains(annotations, k) {
				v.fail(path, "the schema uses %q, which this validator does not know", k)
			}
		}
	}
	if obj, ok := value.(map[string]any); ok {
		v.checkObject(sch, obj, path)
	}
}

func (v *validator) resolve(ref string) map[string]any {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	defs, _ := v.root["$defs"].(map[string]any)
	def, found := defs[name].(map[string]any)
	if !ok || !found {
		panic("jsonschema: unresolvable $ref " + ref)
	}
	return def
}

func (v *validator) checkType(t any, value any, path string) {
	types := []string{}
	switch t := t.(type) {
	case string:
		types = append(types, t)
	case []any:
		for _, x := range t {
			types = append(types, x.(string))
		}
	}
	got := typeOf(value)
	for _, want := range types {
		if want == got || want == "number" && got == "integer" {
			return
		}
	}
	v.fail(path, "expected %s, got %s", strings.Join(types, " or "), got)
}

// checkAlternatives: anyOf needs one branch to pass, oneOf exactly one.
// When none passes, the errors of the branch that got furthest are
// reported, since that is most likely what was meant: one whose type fits
// the value, then the one with the fewest errors.
func (v *validator) checkAlternatives(kind string, branches []any, value any, path string) {
	var best []string
	bestScore, passed := 0, 0
	for _, b := range branches {
		sub := &validator{root: v.root}
		sub.check(b.(map[string]any), value, path)
		score := len(sub.errs)
		if slices.ContainsFunc(sub.errs, func(e string) bool { return strings.HasPrefix(e, path+": expected ") }) {
			score += 1000 // the value is not even of this branch's type
		}
		if score == 0 {
			passed++
		} else if best == nil || score < bestScore {
			best, bestScore = sub.errs, score
		}
	}
	switch {
	case passed == 0:
		v.errs = append(v.errs, best...)
	case kind == "oneOf" && passed > 1:
		v.fail(path, "matches %d of the oneOf alternatives, not exactly one", passed)
	}
}

func (v *validator) checkObject(sch map[string]any, obj map[string]any, path string) {
	props, _ := sch["properties"].(map[string]any)
	patterns, _ := sch["patternProperties"].(map[string]any)
	for _, req := range asStrings(sch["required"]) {
		if _, ok := obj[req]; !ok {
			v.fail(path, "%s is required", req)
		}
	}
	for _, key := range sortedKeys(obj) {
		sub := path + "." + key
		if names, ok := sch["propertyNames"].(map[string]any); ok {
			v.check(names, key, sub)
		}
		matched := false
		if p, ok := props[key].(map[string]any); ok {
			v.check(p, obj[key], sub)
			matched = true
		}
		for _, pat := range sortedKeys(patterns) {
			if regexp.MustCompile(pat).MatchString(key) {
				v.check(patterns[pat].(map[string]any), obj[key], sub)
				matched = true
			}
		}
		if matched {
			continue
		}
		switch extra := sch["additionalProperties"].(type) {
		case bool:
			if !extra {
				v.fail(sub, "unknown key %q; known keys: %s", key, strings.Join(sortedKeys(props), ", "))
			}
		case map[string]any:
			v.check(extra, obj[key], sub)
		}
	}
}

// normalize turns what yaml.v3 decodes (int, map[string]interface{}, …)
// into what encoding/json would: float64 numbers, map[string]any.
func normalize(x any) any {
	switch x := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = normalize(v)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[fmt.Sprint(k)] = normalize(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = normalize(v)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return x
}

func typeOf(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func equal(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func show(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

func asStrings(x any) []string {
	var out []string
	if arr, ok := x.([]any); ok {
		for _, s := range arr {
			out = append(out, s.(string))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
