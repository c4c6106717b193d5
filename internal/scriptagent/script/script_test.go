package script

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeRefusesUnknownKeys(t *testing.T) {
	sc, err := Decode(strings.NewReader(`{"steps":[{"say":"hi","sleep_ms":5}]}`))
	require.NoError(t, err)
	assert.Equal(t, []Step{{Say: "hi", SleepMS: 5}}, sc.Steps)

	_, err = Decode(strings.NewReader(`{"steps":[{"say":"hi","sleep":5}]}`))
	require.ErrorContains(t, err, `unknown field "sleep"`)
	_, err = Decode(strings.NewReader(`{"step":[]}`))
	require.Error(t, err, "a misspelt top-level key")
	_, err = Decode(strings.NewReader(`{"steps":[{"emit":[{"topic":"a","paylod":"x"}]}]}`))
	require.ErrorContains(t, err, `unknown field "paylod"`, "keys of nested objects too")
	_, err = Decode(strings.NewReader(`{"steps":[{"else":{"sai":"x"}}]}`))
	require.ErrorContains(t, err, `unknown field "sai"`, "and of else steps")
	_, err = Decode(strings.NewReader(`{"steps":[]} {"steps":[]}`))
	require.Error(t, err, "two scripts in one file")
}

func TestReplaceIsAPair(t *testing.T) {
	sc, err := Decode(strings.NewReader(`{"steps":[{"replace":{"a.txt":["old","new"]}}]}`))
	require.NoError(t, err)
	assert.Equal(t, Replace{Old: "old", New: "new"}, sc.Steps[0].Replace["a.txt"])
	for _, bad := range []string{`["old"]`, `["a","b","c"]`, `"old"`} {
		_, err := Decode(strings.NewReader(`{"steps":[{"replace":{"a.txt":` + bad + `}}]}`))
		assert.Error(t, err, bad)
	}
}

// TestRoundTrip writes a script with every key set and reads it back: what
// a test writes is what the agent reads.
func TestRoundTrip(t *testing.T) {
	want := Script{
		Steps: []Step{{
			Write: map[string]string{"a.txt": "a\n"}, Append: map[string]string{"b.txt": "b\n"},
			Replace: map[string]Replace{"c.txt": {Old: "x", New: "y"}},
			Sh:      "true", Commit: "work",
			Emit:      []Emit{{Topic: "build.done", Payload: `{"n":1}`, Target: "reviewer", JSON: true}},
			Raw:       []string{"not json"},
			PrintFile: "stream.jsonl", Say: "hi {{run}}", Stderr: "oops", SleepMS: 5, Exit: 3,
			IgnoreSIGTERM: true, SpawnChild: true,
			WhenFile: map[string]string{"a.txt": "a"}, WhenLines: map[string]int{"b.txt": 2},
			Else: &Step{Say: "else"},
		}},
		ByHat: map[string][]Step{"builder": {{Say: "build"}}},
	}
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, want.WriteFile(path))
	got, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	data, err := Script{Steps: []Step{{Say: "hi"}}}.Marshal()
	require.NoError(t, err)
	assert.JSONEq(t, `{"steps":[{"say":"hi"}]}`, string(data), "unset keys are left out")
}
