package config_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

// A hat the registry refuses is reported at its own line, not the file's.
func TestRegistryPlacesHatProblems(t *testing.T) {
	cfg, err := config.LoadBytes("ralph.yml", []byte("cli:\n  backend: claude\nhats:\n  builder:\n    triggers: build.start\n  idle:\n"))
	require.NoError(t, err)
	_, err = cfg.Registry("ralph.yml")
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	require.Len(t, cerr.Problems, 1)
	assert.Equal(t, "ralph.yml", cerr.Problems[0].File)
	assert.Equal(t, 6, cerr.Problems[0].Line, "the idle hat's line")
}

func TestTopologyProblemsPlacesFindings(t *testing.T) {
	cfg, err := config.LoadBytes("ralph.yml", []byte("hats:\n  builder:\n    triggers: build.start\n    publishes: build.done\n  lonely:\n    triggers: nobody.sends.this\n"))
	require.NoError(t, err)
	reg, err := cfg.Registry("ralph.yml")
	require.NoError(t, err)
	errs, warnings := cfg.TopologyProblems(reg, "ralph.yml")
	assert.Empty(t, errs)
	require.Len(t, warnings, 1, "build.done goes to no hat")
	assert.Equal(t, "ralph.yml:2", warnings[0].Where(), "at builder's line")
	assert.Contains(t, warnings[0].Msg, `hat "builder" publishes "build.done"`)
	_, ok := cfg.FindHat("lonely")
	assert.True(t, ok)
	_, ok = cfg.FindHat("nobody")
	assert.False(t, ok)
}

func TestLoadIn(t *testing.T) {
	dir := t.TempDir()
	_, _, err := config.LoadIn(dir, nil, nil, config.Options{})
	require.ErrorIs(t, err, config.ErrNotFound)

	col := config.Collection{Name: "preset:x", Data: []byte("hats:\n  builder:\n    triggers: build.start\n"), Dir: dir}
	cfg, _, err := config.LoadIn(dir, nil, &col, config.Options{})
	require.NoError(t, err, "a collection needs no config file")
	assert.Len(t, cfg.Hats, 1)

	want := writeFile(t, dir, "ralph.yml", "event_loop:\n  prompt: x\n")
	_, path, err := config.LoadIn(dir, nil, nil, config.Options{})
	require.NoError(t, err)
	assert.Equal(t, want, path)
	paths := []string{"ralph.yml"}
	_, path, err = config.LoadIn(dir, paths, nil, config.Options{})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "ralph.yml"), path, "relative to dir")
	assert.Equal(t, []string{"ralph.yml"}, paths, "the caller's paths are left alone")
}
