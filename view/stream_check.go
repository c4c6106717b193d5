package view

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// CheckStream checks a --headless stream against its contract and returns
// the event kinds in order: every line is one JSON object that its schema
// (HeadlessSchema) accepts, whose first fields are "event" and an RFC 3339
// UTC "ts", and exactly one complete, ended or failed line ends it.
// Programs that consume the stream, and ralph's tests, can hold it to that.
func CheckStream(stream string) ([]string, error) {
	if !strings.HasSuffix(stream, "\n") {
		return nil, fmt.Errorf("the stream does not end with a newline")
	}
	var kinds []string
	for i, line := range strings.Split(strings.TrimSuffix(stream, "\n"), "\n") {
		kind, err := checkStreamLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w: %s", i+1, err, line)
		}
		kinds = append(kinds, kind)
	}
	ends := 0
	for _, k := range kinds {
		if slices.Contains(headlessEnds, k) {
			ends++
		}
	}
	switch {
	case ends != 1:
		return nil, fmt.Errorf("%d complete, ended or failed lines, want exactly one: %v", ends, kinds)
	case !slices.Contains(headlessEnds, kinds[len(kinds)-1]):
		return nil, fmt.Errorf("the stream does not end with complete, ended or failed: %v", kinds)
	}
	return kinds, nil
}

// eventSchemas are the schemas of each event, resolved from
// HeadlessSchema: a line is checked against its event's alone, so that a
// mistake is named by field rather than as "none of the events".
var eventSchemas = sync.OnceValues(func() (map[string]*jsonschema.Resolved, error) {
	var root jsonschema.Schema
	if err := json.Unmarshal(HeadlessSchema(), &root); err != nil {
		return nil, err
	}
	out := map[string]*jsonschema.Resolved{}
	for name, s := range root.Defs {
		s.Schema = root.Schema
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
})

// validateHeadlessLine checks a line, decoded, against its event's schema.
func validateHeadlessLine(m map[string]any) error {
	schemas, err := eventSchemas()
	if err != nil {
		return err
	}
	kind, _ := m["event"].(string)
	s, ok := schemas[kind]
	if !ok {
		return fmt.Errorf("%q is not an event of the stream", kind)
	}
	if err := s.Validate(m); err != nil {
		return fmt.Errorf("not in the stream's schema: %w", err)
	}
	return nil
}

func checkStreamLine(line string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return "", fmt.Errorf("not a JSON object")
	}
	if err := validateHeadlessLine(m); err != nil {
		return "", err
	}
	kind, ok := m["event"].(string)
	if !ok || kind == "" {
		return "", fmt.Errorf("no event")
	}
	if !strings.HasPrefix(line, `{"event":"`+kind+`","ts":"`) {
		return "", fmt.Errorf("does not start with event and ts")
	}
	ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["ts"]))
	if err != nil {
		return "", fmt.Errorf("ts: %w", err)
	}
	if ts.Location() != time.UTC {
		return "", fmt.Errorf("ts not in UTC")
	}
	return kind, nil
}
