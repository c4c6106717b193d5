package fakemodel_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

func TestParseScript(t *testing.T) {
	s, err := fakemodel.ParseScript([]byte(`{"turns":[
		{"text":"I will create hello.txt.","tools":[{"write":{"path":"hello.txt","content":"hello\n"}}]},
		{"tools":[{"shell":{"command":"echo hi >> hello.txt"}},{"read":{"path":"hello.txt"}}]},
		{"tools":[{"call":{"name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}}]},
		{"text":"done <event topic=\"build.done\">tests: pass</event>"},
		{"error":{"status":400,"message":"fakemodel scripted failure"}}]}`))
	require.NoError(t, err)
	require.Len(t, s.Turns, 5)
	assert.Equal(t, &fakemodel.WriteCall{Path: "hello.txt", Content: "hello\n"}, s.Turns[0].Tools[0].Write)
	assert.Equal(t, "echo hi >> hello.txt", s.Turns[1].Tools[0].Shell.Command)
	assert.Equal(t, "hello.txt", s.Turns[1].Tools[1].Read.Path)
	assert.Equal(t, "apply_patch", s.Turns[2].Tools[0].Call.Name)
	assert.Equal(t, 400, s.Turns[4].Error.Status)
}

func TestParseScriptRejects(t *testing.T) {
	cases := map[string]struct {
		json, wantErr string
	}{
		"unknown key":          {`{"turns":[{"tool":[]}]}`, `unknown field "tool"`},
		"two calls in one":     {`{"turns":[{"tools":[{"write":{"path":"a","content":""},"shell":{"command":"x"}}]}]}`, "turn 1: tool 1: needs exactly one"},
		"empty call":           {`{"turns":[{"text":"a"},{"tools":[{}]}]}`, "turn 2: tool 1: needs exactly one"},
		"write without path":   {`{"turns":[{"tools":[{"write":{"content":"x"}}]}]}`, "write needs a path"},
		"shell without cmd":    {`{"turns":[{"tools":[{"shell":{}}]}]}`, "shell needs a command"},
		"error with text":      {`{"turns":[{"text":"a","error":{"status":500,"message":"x"}}]}`, "cannot also have text"},
		"error status not 4xx": {`{"turns":[{"error":{"status":200,"message":"x"}}]}`, "not an HTTP error"},
		"not json":             {`{"turns":`, "parse script"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := fakemodel.ParseScript([]byte(tc.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestLoadScriptNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"turns":[{"tools":[{}]}]}`), 0o644))
	_, err := fakemodel.LoadScript(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)

	_, err = fakemodel.LoadScript(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
