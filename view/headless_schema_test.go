package view

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/golden"
)

// headlessSchemaFile is the schema committed where HeadlessSchemaURL
// points.
const headlessSchemaFile = "../docs/headless.schema.json"

func TestHeadlessSchemaFileInSync(t *testing.T) {
	got := HeadlessSchema()
	if golden.Updating() {
		require.NoError(t, os.WriteFile(headlessSchemaFile, got, 0o644))
		return
	}
	want, err := os.ReadFile(headlessSchemaFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got),
		"docs/headless.schema.json is out of date: run go test ./view/ -run TestHeadlessSchemaFileInSync -update (or make golden)")
}

// Every event the schema names is one the stream may end with or one
// that comes before the end; the ends are in the schema.
func TestHeadlessSchemaNamesEveryEvent(t *testing.T) {
	var root struct {
		Defs  map[string]json.RawMessage `json:"$defs"`
		OneOf []struct {
			Ref string `json:"$ref"`
		} `json:"oneOf"`
	}
	require.NoError(t, json.Unmarshal(HeadlessSchema(), &root))
	require.Len(t, root.OneOf, len(headlessEvents))
	for _, e := range headlessEvents {
		assert.Contains(t, root.Defs, e.name)
	}
	for _, end := range headlessEnds {
		assert.Contains(t, root.Defs, end)
	}
}

// The specification's tool types are read, write and bash: a tool line
// of another type is not in the schema; nor is a complete line of a run
// that did not complete, nor a cost of 0 for one that is unknown.
func TestHeadlessSchemaHoldsTheSpecificationsValues(t *testing.T) {
	end := func(event, fields string) string {
		return `{` + event + `,"ts":"2026-11-22T10:00:00Z","timestamp":"2026-11-22T10:00:00Z","tasks_done":1,"total_duration_ms":5,` +
			`"run_id":"r","iterations":1,"cost_known":0,"cost_source":"unknown","tokens":{"input":0,"output":0,"total":0},` +
			`"activations":{},"events_accepted":0,"events_rejected":0,"commits":0,"events_file":"e",` + fields + `}`
	}
	head := `"ts":"2026-11-22T10:00:00Z","timestamp":"2026-11-22T10:00:00Z"`
	for line, ok := range map[string]bool{
		`{"event":"tool",` + head + `,"type":"bash","iteration":1,"hat":"h","name":"Bash"}`:              true,
		`{"event":"tool",` + head + `,"type":"shell","iteration":1,"hat":"h","name":"Bash"}`:             false,
		`{"event":"tool",` + head + `,"type":"other","iteration":1,"hat":"h","name":"WebFetch"}`:         false,
		`{"event":"tool_other",` + head + `,"type":"other","iteration":1,"hat":"h","name":"Fetch"}`:      true,
		`{"event":"stuck",` + head + `,"reason":"no progress","iterations_without_progress":3}`:          true,
		`{"event":"stuck",` + head + `,"reason":"no progress"}`:                                          false,
		end(`"event":"complete"`, `"reason":"completed","exit_code":0,"cost":null,"cost_unknown":true`):  true,
		end(`"event":"complete"`, `"reason":"completed","exit_code":0,"cost":0.5,"cost_unknown":false`):  true,
		end(`"event":"complete"`, `"reason":"stuck","exit_code":1,"cost":null,"cost_unknown":true`):      false,
		end(`"event":"ended"`, `"reason":"stuck","exit_code":1,"cost":null,"cost_unknown":true`):         true,
		end(`"event":"ended"`, `"reason":"max_iterations","exit_code":2,"cost":"0","cost_unknown":true`): false,
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		err := validateHeadlessLine(m)
		if ok {
			assert.NoError(t, err, line)
		} else {
			assert.Error(t, err, line)
		}
	}
}
