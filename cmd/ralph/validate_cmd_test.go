package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/examples"
)

// Every preset passes ralph validate, by name with -H and as the ralph.yml
// ralph init writes.
func TestValidatePresets(t *testing.T) {
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("PROMPT.md", "Do the thing.\n")
			r := w.ralph("validate", "-H", name)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.Contains(t, r.stdout, "preset:"+name+": ok (")

			r = w.ralph("init", "--preset", name)
			require.Equal(t, 0, r.code, r.stderr)
			r = w.ralph("validate")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
		})
	}
}
