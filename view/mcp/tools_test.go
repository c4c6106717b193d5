package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/view/api"
)

// An agent picks a tool and fills its arguments from their descriptions
// alone: every tool and every argument has one.
func TestToolsDescribeThemselves(t *testing.T) {
	serverEnd, clientEnd := sdk.NewInMemoryTransports()
	ss, err := NewServer(t.TempDir(), "test", nil).Connect(t.Context(), serverEnd, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), clientEnd, nil)
	require.NoError(t, err)
	defer cs.Close()

	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, list.Tools, 9)
	for _, tool := range list.Tools {
		assert.NotEmpty(t, tool.Description, tool.Name)
		assert.NotNil(t, tool.OutputSchema, "%s has structured output", tool.Name)
		schema := tool.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			assert.NotEmpty(t, p.(map[string]any)["description"], "%s's argument %s", tool.Name, name)
		}
	}
}

// The structured output is validated against its schema before it is
// sent, and a mismatch fails the call: every field of a status and an
// event listing, filled in, must pass.
func TestOutputSchemasAcceptEveryField(t *testing.T) {
	for _, c := range []struct {
		value  any
		schema *jsonschema.Schema
	}{
		{filled[api.Status](), schemaOf[api.Status]()},
		{filled[EventsResult](), schemaOf[EventsResult]()},
		{filled[Message](), schemaOf[Message]()},
		{filled[Asked](), schemaOf[Asked]()},
	} {
		v, schema := c.value, c.schema
		resolved, err := schema.Resolve(nil)
		require.NoError(t, err)
		data, err := json.Marshal(v)
		require.NoError(t, err)
		var instance any
		require.NoError(t, json.Unmarshal(data, &instance))
		assert.NoError(t, resolved.Validate(instance), "%T: %s", v, data)
	}
}

// filled is a T with every field set, at every depth: one element in
// each slice and map, every pointer pointing, a JSON object in each raw
// message.
func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem(), 0)
	return v
}

func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(`{"a": [1, "b"]}`)))
		return
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key, elem := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(key, depth+1)
		fill(elem, depth+1)
		v.SetMapIndex(key, elem)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
