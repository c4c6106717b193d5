package config_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
)

// dump renders a loaded config for a golden file: the typed sections as
// JSON, raw sections re-encoded as YAML, temp dirs replaced by $DIR.
func dump(t *testing.T, c *config.Config, dir string) string {
	t.Helper()
	b, err := json.MarshalIndent(struct {
		EventLoop          config.EventLoop
		CLI                config.CLI
		Hats               []config.Hat
		AcceptanceCriteria []criteria.Spec
		Gates              []config.Gate
		Memories           config.Memories
		Path               string
		Warnings           []string
	}{c.EventLoop, c.CLI, c.Hats, c.AcceptanceCriteria, c.Gates, c.Memories, c.Path, c.Warnings}, "", "  ")
	require.NoError(t, err)
	s := string(b) + "\n"
	if dir != "" {
		s = strings.ReplaceAll(s, dir, "$DIR")
	}
	return s
}

// replaceDir replaces a temp dir in s with $DIR.
func replaceDir(s, dir string) string {
	return strings.ReplaceAll(s, dir, "$DIR")
}
