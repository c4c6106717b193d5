package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ralph status's recent events and the text ralph serve's page shows of
// each event say ralph's own lines in the sentences `ralph events` prints,
// never as raw JSON.
func TestEveryViewSaysRalphsLinesAsRalphEventsDoes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  max_iterations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("done")}})
	require.Equal(t, 2, w.ralph("loop").code)

	// The payload column of `ralph events`, by topic.
	table := map[string]string{}
	for _, l := range strings.Split(w.ralph("events").stdout, "\n") {
		for _, topic := range []string{"iteration.finished", "loop.terminate"} {
			if _, text, ok := strings.Cut(l, " "+topic+" "); ok {
				table[topic] = strings.TrimSpace(text)
			}
		}
	}
	require.Contains(t, table["iteration.finished"], "ralph success")

	status := w.ralph("status")
	require.Equal(t, 0, status.code, status.stderr)
	assert.NotContains(t, status.stdout, `{"`, "no raw JSON among the recent events")
	assert.Regexp(t, `  iteration.finished +`+strings.ReplaceAll(table["iteration.finished"], ".", `\.`)+"\n", status.stdout)

	s := startServe(t, w.dir)
	es := s.stream("/api/events/stream?text=true&topic=iteration.finished", "")
	defer es.close()
	line, text, ok := strings.Cut(es.next().data, "\n")
	require.True(t, ok, "the text below the line")
	assert.Contains(t, line, `"topic":"iteration.finished"`)
	var shown string
	require.NoError(t, json.Unmarshal([]byte(text), &shown))
	assert.Equal(t, table["iteration.finished"], shown)
}
