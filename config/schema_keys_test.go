package config

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/criteria"
)

// The schema's properties are exactly the keys the loader accepts, each
// implemented one described, so the schema cannot drift from the loader.
func TestSchemaKeysMatchLoader(t *testing.T) {
	var s struct {
		Properties map[string]json.RawMessage
		Defs       map[string]struct {
			Properties map[string]struct {
				Description string
				Deprecated  bool
			}
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(JSONSchema(), &s))

	l, c, h := newLoader(), Default(), Hat{}
	var at *yaml.Node
	var chain []chainEntry
	chained := func(fields []field) []string {
		return fieldKeys(append(fields, l.fallbackFields(&c.CLI, map[string]bool{}, &chain)...))
	}
	spec := criterionKeys(l)
	top := []string{"event_loop", "cli", "hats", "acceptance_criteria", "gates", "memories", "human", "autopilot", "redact", "budget", "pricing", "sandbox", "chains"}
	for _, f := range flatKeys {
		top = append(top, f.name)
	}
	tests := []struct {
		def     string
		keys    []string
		ignored []string
	}{
		{"event_loop", fieldKeys(l.eventLoopFields(c)), orchestratorEventLoopKeys},
		{"cli", append(chained(l.cliFields(&c.CLI, map[string]bool{}, &at, false)), "disallowed_tools"), orchestratorCLIKeys},
		{"hatBackend", chained(l.cliFields(&c.CLI, map[string]bool{}, &at, true)), orchestratorHatBackendKeys},
		{"fallbackBackend", fieldKeys(l.cliFields(&c.CLI, map[string]bool{}, &at, true)), nil},
		{"hat", fieldKeys(l.hatFields(&h, c.CLI)), orchestratorHatKeys},
		{"criterion", spec, nil},
		{"memories", []string{"enabled", "budget", "shared"}, orchestratorMemoriesKeys},
		{"human", []string{"timeout_seconds", "on_timeout"}, nil},
		{"autopilot", fieldKeys(l.autopilotFields(&c.Autopilot)), nil},
		{"taskSource", fieldKeys(l.taskSourceFields(&c.Autopilot.Source)), nil},
		{"sandbox", fieldKeys(l.sandboxFields(&c.Sandbox)), nil},
		{"price", priceKeys, nil},
	}
	for _, tt := range tests {
		t.Run(tt.def, func(t *testing.T) {
			props := s.Defs[tt.def].Properties
			var got, implemented []string
			for k, p := range props {
				got = append(got, k)
				if !p.Deprecated {
					implemented = append(implemented, k)
					assert.NotEmpty(t, p.Description, "add a description of %s.%s to schemaDocs", tt.def, k)
				}
			}
			assert.ElementsMatch(t, append(append([]string{}, tt.keys...), tt.ignored...), got)
			assert.ElementsMatch(t, tt.keys, implemented)
		})
	}
	t.Run("top", func(t *testing.T) {
		var got []string
		for k := range s.Properties {
			got = append(got, k)
		}
		sort.Strings(got)
		assert.ElementsMatch(t, append(top, orchestratorTopKeys...), got)
	})
}

func criterionKeys(l *loader) []string {
	return fieldKeys(l.criterionFields(new(criteria.Spec)))
}
