package examples_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/hats"
)

func TestPresetList(t *testing.T) {
	assert.Equal(t, []string{
		"code-assist", "solo", "tdd", "spec", "spec-driven",
		"refactor", "test-writing", "perf", "docs",
		"debug", "triage", "merge-conflict",
		"review", "pr-review", "wave-review", "security", "qa",
		"research",
	}, examples.Names())
	assert.Equal(t, examples.DefaultPreset, examples.Names()[0], "the default comes first")
	_, ok := examples.Lookup(examples.DefaultPreset)
	assert.True(t, ok, "the default preset exists")
	for _, name := range []string{"", "nope", "../demo/ralph", "presets/solo", "solo.yml"} {
		_, ok := examples.Lookup(name)
		assert.False(t, ok, name)
	}
}

// Every preset is a complete config that loads without a warning, has a
// sound topology, and says what it is for.
func TestPresetsAreSound(t *testing.T) {
	for _, p := range examples.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			first, _, _ := strings.Cut(string(p.Data), "\n")
			assert.Equal(t, "# yaml-language-server: $schema="+examples.SchemaURL, first)
			assert.NotEmpty(t, p.Description, "a # description: line")
			assert.LessOrEqual(t, len(p.Description), 120, "one line in ralph init --list")

			cfg, err := config.LoadBytes(p.Path(), p.Data)
			require.NoError(t, err)
			assert.Empty(t, cfg.Warnings)
			assert.Equal(t, "claude", cfg.CLI.Backend)
			assert.NotEmpty(t, cfg.Hats)
			for _, h := range cfg.Hats {
				assert.NotEmpty(t, h.Description, "hat %s", h.ID)
				assert.NotEmpty(t, h.Instructions, "hat %s", h.ID)
			}
			reg, err := hats.NewRegistry(cfg.HatList(), hats.WithCompletionTopic(cfg.EventLoop.CompletionPromise))
			require.NoError(t, err)
			assert.Empty(t, hats.Check(reg, cfg.Topology()), "static checks")
		})
	}
}

// docs/configuration.md's table of presets names each preset once, in
// ralph init --list's order, so the docs cannot fall behind a new preset.
func TestPresetTableInDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "| preset | hats |\n")
	require.True(t, ok, "the presets table")
	table, _, _ = strings.Cut(table, "\n\n")
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)`").FindAllStringSubmatch(table, -1) {
		names = append(names, m[1])
	}
	assert.Equal(t, examples.Names(), names)
}
