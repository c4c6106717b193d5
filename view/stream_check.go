package view

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// CheckStream checks a --headless stream against its contract and returns
// the event kinds in order: every line is one JSON object whose first
// fields are "event" and an RFC 3339 UTC "ts", and exactly one complete or
// failed line ends it. Programs that consume the stream, and ralph's tests,
// can hold it to that.
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
		if k == "complete" || k == "failed" {
			ends++
		}
	}
	switch {
	case ends != 1:
		return nil, fmt.Errorf("%d complete or failed lines, want exactly one: %v", ends, kinds)
	case !slices.Contains([]string{"complete", "failed"}, kinds[len(kinds)-1]):
		return nil, fmt.Errorf("the stream does not end with complete or failed: %v", kinds)
	}
	return kinds, nil
}

func checkStreamLine(line string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return "", fmt.Errorf("not a JSON object")
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
