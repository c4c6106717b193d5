package fakemodel

import (
	"sort"
	"strings"
)

// schemaType returns a JSON-schema node's type in lower case. Gemini's
// OpenAPI-style schemas spell types in upper case ("OBJECT"), and JSON Schema
// allows a list such as ["string","null"]; the first non-null one wins.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return strings.ToLower(t)
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok && !strings.EqualFold(str, "null") {
				return strings.ToLower(str)
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return ""
}

// schemaProps returns an object schema's properties and its required names.
func schemaProps(s map[string]any) (map[string]map[string]any, []string) {
	props := map[string]map[string]any{}
	if raw, ok := s["properties"].(map[string]any); ok {
		for name, p := range raw {
			if m, ok := p.(map[string]any); ok {
				props[name] = m
			} else {
				props[name] = map[string]any{}
			}
		}
	}
	var required []string
	if raw, ok := s["required"].([]any); ok {
		for _, r := range raw {
			if name, ok := r.(string); ok {
				required = append(required, name)
			}
		}
	}
	return props, required
}

// sortedKeys gives map keys in a fixed order so answers are reproducible.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// exampleValue builds a value that satisfies the schema well enough for the
// side requests CLIs make (routing classifiers, next-speaker checks, titles):
// const, else the first enum value, else a value per type — "ok" for strings,
// the minimum (or 1) for numbers, false, an empty list, or an object with
// every property filled in. A property called next_speaker is "user", so
// Gemini CLI's next-speaker check hands the turn back instead of looping.
func exampleValue(name string, s map[string]any, depth int) any {
	if name == "next_speaker" {
		return "user"
	}
	if depth > 8 || s == nil {
		return "ok"
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			if first, ok := alts[0].(map[string]any); ok {
				return exampleValue(name, first, depth+1)
			}
		}
	}
	switch schemaType(s) {
	case "object":
		props, _ := schemaProps(s)
		obj := map[string]any{}
		for _, k := range sortedKeys(props) {
			obj[k] = exampleValue(k, props[k], depth+1)
		}
		return obj
	case "array":
		return exampleArray(s, depth)
	case "integer":
		return int(numberAtLeast(s))
	case "number":
		return numberAtLeast(s)
	case "boolean":
		return false
	case "null":
		return nil
	}
	return "ok"
}

func exampleArray(s map[string]any, depth int) []any {
	out := []any{}
	n, _ := s["minItems"].(float64)
	items, _ := s["items"].(map[string]any)
	for i := 0; i < int(n); i++ {
		out = append(out, exampleValue("", items, depth+1))
	}
	return out
}

// numberAtLeast is the schema's minimum, or 1 when it has none; scores and
// counts are rarely meaningful at 0.
func numberAtLeast(s map[string]any) float64 {
	if m, ok := s["minimum"].(float64); ok {
		return m
	}
	if m, ok := s["exclusiveMinimum"].(float64); ok {
		return m + 1
	}
	return 1
}

// paramRole says what a tool parameter is for, judged by its name only,
// because that is all the CLIs' schemas have in common.
type paramRole int

const (
	roleOther paramRole = iota
	rolePath
	roleContent
	roleCommand
	rolePatch
)

// normName folds "file_path", "filePath" and "file-path" together.
func normName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}
