package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLayerSetsLaysTheNewOverTheRememberedOnce(t *testing.T) {
	prev := []string{"cli.env.A=1", "autopilot.max_tasks=2"}
	assert.Equal(t, []string{"cli.env.A=1", "autopilot.max_tasks=2", "cli.env.B=2"}, LayerSets(prev, []string{"cli.env.B=2"}))
	assert.Equal(t, prev, LayerSets(prev, prev), "given again, not twice")
	assert.Equal(t, []string{"cli.env.A=1", "autopilot.max_tasks=2", "cli.env.A=3"}, LayerSets(prev, []string{"cli.env.A=3"}), "the later wins")
	assert.Equal(t, []string{"cli.env.A=3", "cli.env.A=1"}, LayerSets([]string{"cli.env.A=1", "cli.env.A=3"}, []string{"cli.env.A=1"}),
		"an assignment made again moves to where it takes effect")
	assert.Empty(t, LayerSets(nil, nil))
}
