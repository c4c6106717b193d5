package config_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/golden"
)

func TestFind(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"ralph.yml", []string{"ralph.yml"}, "ralph.yml"},
		{"ralph.yaml", []string{"ralph.yaml"}, "ralph.yaml"},
		{"ralph.json", []string{"ralph.json"}, "ralph.json"},
		{"ralph.yml before ralph.yaml", []string{"ralph.yaml", "ralph.yml"}, "ralph.yml"},
		{"ralph.yaml before ralph.json", []string{"ralph.json", "ralph.yaml"}, "ralph.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				writeFile(t, dir, f, "event_loop:\n  prompt: x\n")
			}
			got, err := config.Find(dir)
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(dir, tt.want), got)
		})
	}
}

func TestFindNothing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "PROMPT.md", "x")
	_, err := config.Find(dir)
	require.Error(t, err)
	assert.True(t, errors.Is(err, config.ErrNotFound))
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	require.Len(t, cerr.Problems, 1)
	assert.Equal(t, "no ralph.yml in "+dir, cerr.Problems[0].Msg)
	golden.Assert(t, "testdata/find_hint.golden", cerr.Problems[0].Hint+"\n")
}
