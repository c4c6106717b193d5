package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateCountsOneHat(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  completion_promise: DONE\nhats:\n  worker:\n    triggers: [task.start]\n    publishes: [DONE]\n")
	r := w.ralph("validate")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ": ok (1 hat, backend ")
}
