package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/hats"
)

func TestWaveKeysLoad(t *testing.T) {
	data := `hats:
  reviewer:
    triggers: [review.perspective]
    publishes: [review.done]
    concurrency: 3
    timeout: 600
  synthesizer:
    triggers: [review.done]
    aggregate:
      mode: wait_for_all
      timeout: 120
`
	c, err := config.LoadBytes("ralph.yml", []byte(data))
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	list := c.HatList()
	require.Len(t, list, 2)
	assert.Equal(t, 3, list[0].Concurrency)
	assert.Equal(t, 600*time.Second, list[0].Timeout)
	assert.Equal(t, &hats.Aggregate{Mode: hats.AggregateWaitForAll, Timeout: 120 * time.Second}, list[1].Aggregate)
}

func TestWaveKeysRefused(t *testing.T) {
	cases := map[string]struct{ yaml, msg, hint string }{
		"unknown mode": {
			"hats:\n  s:\n    triggers: [a]\n    aggregate: {mode: first_n}\n",
			`ralph.yml:4: hats.s.aggregate.mode: unknown value "first_n"`, "wait_for_all",
		},
		"no mode": {
			"hats:\n  s:\n    triggers: [a]\n    aggregate: {timeout: 5}\n",
			"ralph.yml:4: hats.s.aggregate: no mode", "add mode: wait_for_all",
		},
		"both on one hat": {
			"hats:\n  s:\n    triggers: [a]\n    concurrency: 2\n    aggregate: {mode: wait_for_all}\n",
			"ralph.yml:5: hats.s: a hat cannot have both concurrency: 2 and aggregate", "split it in two",
		},
		"zero concurrency": {
			"hats:\n  s:\n    triggers: [a]\n    concurrency: 0\n",
			"ralph.yml:4: hats.s.concurrency must be at least 1, got 0", "concurrency: 3",
		},
		"negative timeout": {
			"hats:\n  s:\n    triggers: [a]\n    timeout: -1\n",
			"ralph.yml:4: hats.s.timeout must not be negative", "300 seconds",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := config.LoadBytes("ralph.yml", []byte(tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Hint(), tc.hint)
		})
	}
}
