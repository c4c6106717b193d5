package benchgen_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
)

// Every generated line is an event, the same n gives the same bytes, and
// each topic of the cycle comes n/len(Cycle) times.
func TestWriteIsDeterministicAndValid(t *testing.T) {
	const n = 800
	var a, b bytes.Buffer
	size, err := benchgen.Write(&a, n)
	require.NoError(t, err)
	_, err = benchgen.Write(&b, n)
	require.NoError(t, err)
	assert.Equal(t, int64(a.Len()), size)
	assert.Equal(t, a.String(), b.String())
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n") {
		ev, err := events.ParseLine([]byte(line))
		require.NoError(t, err, line)
		counts[ev.Topic]++
	}
	assert.Equal(t, n/len(benchgen.Cycle), counts["build.done"])
	path := filepath.Join(t.TempDir(), "events.jsonl")
	fileSize, err := benchgen.WriteFile(path, n)
	require.NoError(t, err)
	assert.Equal(t, size, fileSize)
}
