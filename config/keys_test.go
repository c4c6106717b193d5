package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The yaml tags on the types document the keys; the decoder's tables are
// what is accepted. They must say the same.
func TestKeyTablesMatchTags(t *testing.T) {
	l, c, h := newLoader(), Default(), Hat{}
	var at *yaml.Node
	var chain []chainEntry
	tests := []struct {
		name   string
		typ    any
		fields []field
	}{
		{"event_loop", EventLoop{}, l.eventLoopFields(c)},
		{"cli", CLI{}, l.topCLIFields(&c.CLI, map[string]bool{}, &at, &chain)},
		{"hat", Hat{}, l.hatFields(&h, c.CLI)},
		{"autopilot", Autopilot{}, l.autopilotFields(&c.Autopilot)},
		{"autopilot.source", TaskSource{}, l.taskSourceFields(&c.Autopilot.Source)},
		{"sandbox", Sandbox{}, l.sandboxFields(&c.Sandbox)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, yamlTags(tt.typ), fieldKeys(tt.fields))
		})
	}
}

func yamlTags(v any) []string {
	var tags []string
	typ := reflect.TypeOf(v)
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			tags = append(tags, tag)
		}
	}
	return tags
}

// A key is either implemented or ignored, never both.
func TestOrchestratorKeysAreNotImplemented(t *testing.T) {
	l, c, h := newLoader(), Default(), Hat{}
	var at *yaml.Node
	top := []string{"event_loop", "cli", "hats", "acceptance_criteria", "gates", "budget"}
	for _, f := range flatKeys {
		top = append(top, f.name)
	}
	tests := []struct {
		name        string
		implemented []string
		ignored     []string
	}{
		{"top", top, orchestratorTopKeys},
		{"event_loop", fieldKeys(l.eventLoopFields(c)), orchestratorEventLoopKeys},
		{"cli", fieldKeys(l.cliFields(&c.CLI, map[string]bool{}, &at, false)), orchestratorCLIKeys},
		{"hat", fieldKeys(l.hatFields(&h, c.CLI)), orchestratorHatKeys},
		{"hat backend", fieldKeys(l.cliFields(&c.CLI, map[string]bool{}, &at, true)), orchestratorHatBackendKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range tt.ignored {
				assert.NotContains(t, tt.implemented, k)
			}
		})
	}
}

// Nested aliases that would expand to millions of values stop with a
// problem instead of exhausting memory.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 6; i++ {
		prev := "*a" + string(rune('0'+i-1))
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(prev)
		}
		b.WriteString("]\n")
	}
	_, err := LoadBytes("ralph.yml", []byte(b.String()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the file expands to more than 100000 values (hint: use fewer nested aliases)")
}
