package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EEmitConcurrentProcesses: 8 processes × 1,000 emits give 8,000
// whole lines, none interleaved. It starts 8,000 processes, so it runs with
// the end-to-end tests (make e2e), not the race-enabled unit pass; more
// would show nothing more, and cost minutes on a loaded machine.
func TestE2EEmitConcurrentProcesses(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	log := filepath.Join(w.dir, "events.jsonl")
	// One shell per writer runs its 1,000 emits in sequence, so eight run at
	// once for the whole test.
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := `for i in $(seq 1 1000); do "$RALPH" emit load.test "writer ` + string(rune('a'+p)) + ` line $i with some padding to make the line longer than a few bytes" || exit 1; done`
			r := w.ralphShell(script, "RALPH_EVENTS_FILE="+log)
			assert.Equal(t, 0, r.code, r.stderr)
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 8000)
	seen := map[string]bool{}
	for _, l := range lines {
		var ev struct{ Topic, Payload string }
		require.NoError(t, json.Unmarshal([]byte(l), &ev), "line %q", l)
		require.Equal(t, "load.test", ev.Topic)
		require.False(t, seen[ev.Payload], "duplicate %q", ev.Payload)
		seen[ev.Payload] = true
	}
}

// The ralph.yml example in docs/configuration.md is a config a user may
// copy: it must pass ralph validate.
func TestDocsExampleConfigValidates(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "## ralph.yml")
	require.GreaterOrEqual(t, start, 0)
	open := strings.Index(text[start:], "```yaml\n")
	require.GreaterOrEqual(t, open, 0)
	body := text[start+open+len("```yaml\n"):]
	body = body[:strings.Index(body, "```")]
	w := newWorkspace(t)
	w.write("ralph.yml", body)
	r := w.ralph("validate")
	assert.Equal(t, 0, r.code, r.stderr)
}
