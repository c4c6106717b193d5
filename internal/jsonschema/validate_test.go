package jsonschema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const testSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "patternProperties": {"^_": {}},
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z]+$"},
    "count": {"type": "integer", "minimum": 1},
    "ratio": {"type": "number"},
    "mode": {"enum": ["arg", "stdin"]},
    "tags": {"$ref": "#/$defs/stringOrList"},
    "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
    "hats": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "object"}},
    "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]}
  },
  "$defs": {
    "stringOrList": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
    "item": {"type": "object", "required": ["type"], "additionalProperties": false,
             "properties": {"type": {"type": "string"}, "path": {"type": "string"}}}
  }
}`

func validate(t *testing.T, doc string) []string {
	t.Helper()
	s, err := Parse([]byte(testSchema))
	require.NoError(t, err)
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &v))
	return s.Validate(v)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"valid", "name: abc\ncount: 2\nratio: 1.5\nmode: arg\ntags: x\nitems: [{type: a, path: b}]\nhats: {a: {}}\n_anchor: [1]\n", nil},
		{"a list where a string or a list goes", "tags: [a, b]\n", nil},
		{"misspelt key", "nmae: abc\n", []string{`$.nmae: unknown key "nmae"; known keys: count, hats, items, mode, name, one, ratio, tags`}},
		{"wrong type", "name: 3\n", []string{"$.name: expected string, got integer"}},
		{"integer for number", "ratio: 3\n", nil},
		{"pattern", "name: ABC\n", []string{`$.name: "ABC" does not match ^[a-z]+$`}},
		{"minimum", "count: 0\n", []string{"$.count: 0 is less than the minimum 1"}},
		{"enum", "mode: pipe\n", []string{`$.mode: "pipe" is not one of ["arg","stdin"]`}},
		{"anyOf reports the closest branch", "tags: [a, 1]\n", []string{"$.tags[1]: expected string, got integer"}},
		{"required and nested unknown keys", "items: [{path: x, size: 1}]\n", []string{
			"$.items[0]: type is required", `$.items[0].size: unknown key "size"; known keys: path, type`}},
		{"propertyNames", "hats: {Bad: {}}\n", []string{`$.hats.Bad: "Bad" does not match ^[a-z]+$`}},
		{"oneOf needs exactly one", "one: 2\n", []string{"$.one: matches 2 of the oneOf alternatives, not exactly one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, validate(t, tt.doc))
		})
	}
}

func TestUnknownKeyword(t *testing.T) {
	s, err := Parse([]byte(`{"type": "string", "maxLength": 3}`))
	require.NoError(t, err)
	assert.Equal(t, []string{`$: the schema uses "maxLength", which this validator does not know`}, s.Validate("abcd"))
}
