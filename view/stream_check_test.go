package view

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckStream(t *testing.T) {
	good := `{"event":"started","ts":"2026-11-22T10:00:00Z"}` + "\n" + `{"event":"complete","ts":"2026-11-22T10:00:01.5Z"}` + "\n"
	kinds, err := CheckStream(good)
	require.NoError(t, err)
	assert.Equal(t, []string{"started", "complete"}, kinds)

	for name, bad := range map[string]string{
		"no newline at the end":   `{"event":"complete","ts":"2026-11-22T10:00:00Z"}`,
		"not JSON":                "oops\n",
		"ts before event":         `{"ts":"2026-11-22T10:00:00Z","event":"complete"}` + "\n",
		"ts not UTC":              `{"event":"complete","ts":"2026-11-22T10:00:00+01:00"}` + "\n",
		"no end":                  `{"event":"started","ts":"2026-11-22T10:00:00Z"}` + "\n",
		"something after the end": good + `{"event":"warning","ts":"2026-11-22T10:00:02Z"}` + "\n",
		"two ends":                good + `{"event":"failed","ts":"2026-11-22T10:00:02Z"}` + "\n",
	} {
		_, err := CheckStream(bad)
		assert.Error(t, err, name)
	}
}
