package view

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckStream(t *testing.T) {
	good := `{"event":"warning","ts":"2026-11-22T10:00:00Z","timestamp":"2026-11-22T10:00:00Z","message":"m"}` + "\n" +
		`{"event":"failed","ts":"2026-11-22T10:00:01.5Z","timestamp":"2026-11-22T10:00:01.5Z","error":"e","exit_code":3}` + "\n"
	kinds, err := CheckStream(good)
	require.NoError(t, err)
	assert.Equal(t, []string{"warning", "failed"}, kinds)

	for name, bad := range map[string]string{
		"no newline at the end":   `{"event":"complete","ts":"2026-11-22T10:00:00Z"}`,
		"not JSON":                "oops\n",
		"ts before event":         `{"ts":"2026-11-22T10:00:00Z","event":"complete"}` + "\n",
		"ts not UTC":              `{"event":"complete","ts":"2026-11-22T10:00:00+01:00"}` + "\n",
		"no end":                  `{"event":"started","ts":"2026-11-22T10:00:00Z"}` + "\n",
		"something after the end": good + `{"event":"warning","ts":"2026-11-22T10:00:02Z"}` + "\n",
		"two ends":                good + `{"event":"failed","ts":"2026-11-22T10:00:02Z","timestamp":"2026-11-22T10:00:02Z","error":"e","exit_code":3}` + "\n",
		"a field missing":         `{"event":"failed","ts":"2026-11-22T10:00:02Z","timestamp":"2026-11-22T10:00:02Z","exit_code":3}` + "\n",
		"a field of another type": `{"event":"failed","ts":"2026-11-22T10:00:02Z","timestamp":"2026-11-22T10:00:02Z","error":"e","exit_code":"3"}` + "\n",
		"an event it has not":     `{"event":"finished","ts":"2026-11-22T10:00:02Z","timestamp":"2026-11-22T10:00:02Z"}` + "\n",
	} {
		_, err := CheckStream(bad)
		assert.Error(t, err, name)
	}
}
