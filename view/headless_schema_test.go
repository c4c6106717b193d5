package view

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// headlessKinds are the stream's kinds and the types that hold their
// fields, as the reporters emit them.
var headlessKinds = map[string]any{
	"started":           headStarted{},
	"iteration":         headIteration{},
	"tool":              headTool{},
	"commit":            headCommit{},
	"event":             headEvent{},
	"rejected":          headRejected{},
	"task_complete":     headTaskComplete{},
	"iteration_done":    headIterationDone{},
	"stuck":             headStuck{},
	"rate_limited":      headRateLimited{},
	"waiting_for_human": runfiles.Question{},
	"human_answered":    headAnswered{},
	"warning":           headWarning{},
	"complete":          headComplete{},
	"failed":            headFailed{},
}

// docs/headless.schema.json describes every field of every kind the
// stream has, and requires exactly those that are never left out.
func TestHeadlessSchemaMatchesTheStream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "headless.schema.json"))
	require.NoError(t, err)
	var schema struct {
		OneOf []struct {
			Ref string `json:"$ref"`
		} `json:"oneOf"`
		Defs map[string]schemaObject `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &schema))
	var kinds []string
	for _, one := range schema.OneOf {
		kinds = append(kinds, strings.TrimPrefix(one.Ref, "#/$defs/"))
	}
	assert.ElementsMatch(t, slices.Collect(mapKeys(headlessKinds)), kinds, "the schema's oneOf lists the stream's kinds")
	for kind, body := range headlessKinds {
		t.Run(kind, func(t *testing.T) {
			def, ok := schema.Defs[kind]
			require.True(t, ok, "docs/headless.schema.json has no $defs entry for %q", kind)
			fields, required := jsonFields(reflect.TypeOf(body))
			fields, required = append(fields, "event", "ts"), append(required, "event", "ts")
			assert.ElementsMatch(t, fields, slices.Collect(mapKeys(def.Properties)),
				"the schema's properties of %q are the fields ralph writes", kind)
			assert.ElementsMatch(t, required, def.Required,
				"the schema requires the fields of %q that are never left out", kind)
		})
	}
}

type schemaObject struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// jsonFields are the JSON names of t's fields, and those without omitempty
// or omitzero.
func jsonFields(t reflect.Type) (all, required []string) {
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			required = append(required, name)
		}
	}
	return all, required
}
