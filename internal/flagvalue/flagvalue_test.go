package flagvalue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRuntime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5400": 90 * time.Minute, "0": 0, "90m": 90 * time.Minute, "2h30m": 150 * time.Minute, "45s": 45 * time.Second,
	} {
		got, err := ParseRuntime(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"-1", "-2h", "soon", ""} {
		_, err := ParseRuntime(in)
		assert.Error(t, err, in)
	}
}
