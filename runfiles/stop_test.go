package runfiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStopMode(t *testing.T) {
	for in, want := range map[string]StopMode{"next": StopAtBoundary, "now": StopNow, "now\n": StopNow, " next ": StopAtBoundary} {
		got, err := ParseStopMode(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "stop", "NOW", "later"} {
		_, err := ParseStopMode(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `want "next" (before the next iteration) or "now" (at once)`)
	}
}
