package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A negative number given to a flag is refused by the flag's own check,
// which says what it takes, not by kong's guess that -1 is a short flag.
func TestANegativeFlagValueSaysWhatIsAllowed(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	for args, want := range map[string][]string{
		"--max-iterations -1": {"loop", "--max-iterations", "-1"},
		"--parallel -2":       {"autopilot", "--parallel", "-2"},
	} {
		r := w.ralph(want...)
		assert.Equal(t, 3, r.code, args)
		assert.NotContains(t, r.stderr, "short flag", args)
		assert.NotContains(t, r.stderr, "perhaps try", args)
		assert.Contains(t, r.stderr, "must be 1 or more, got -", args)
	}
	r := w.ralph("loop", "--stuck-threshold", "-3", "--max-iterations", "-1")
	assert.Contains(t, r.stderr, "ralph: error: --", "the first of two negative values is refused by its flag")
	assert.NotContains(t, r.stderr, "short flag")
}

// -C names a workspace, which must exist; ralph worker's own directory is
// --checkouts, which it makes, and the mistake of giving it as -C says so.
func TestTheWorkersDirectoryIsItsOwnFlag(t *testing.T) {
	t.Parallel()
	keys := newClusterKeys(t)
	missing := filepath.Join(t.TempDir(), "w1")
	r := runRalph(t, append([]string{"worker", "--cluster", "nats://127.0.0.1:1", "--allow-remote", "/tmp/x.git",
		"--dir", missing}, keys.workerArgs()...)...)
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "ralph: error: -C/--dir "+missing+": no such directory")
	assert.Contains(t, r.stderr, "ralph: hint: ralph worker makes the directory of its checkouts itself: give it as --checkouts "+missing)
	assert.NoDirExists(t, missing)

	r = runRalph(t, append([]string{"worker", "--cluster", "nats://127.0.0.1:1", "--allow-remote", "/tmp/x.git",
		"--checkouts", missing}, keys.workerArgs()...)...)
	assert.NotEqual(t, 0, r.code, "nothing listens on port 1: %s", r.stderr)
	assert.DirExists(t, missing, "the worker made its checkouts' directory before it connected")

	r = runRalph(t, "-C", missing+"-not", "status")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "hint: -C names the workspace ralph runs in, which must exist")
}
