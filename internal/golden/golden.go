// Package golden compares test output with a file committed beside the test
// (a golden file), and rewrites those files when the tests run with -update
// (`make golden`, or go test ./PKG/ -run NAME -update).
//
// It is a test helper: only _test.go files import it. Importing it defines
// the -update flag, so a test package must not define its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Assert fails t unless the file at path holds exactly got. With -update it
// writes got to path instead, creating its directory.
func Assert(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file; to create it, run go test -run '%s' -update in this package", t.Name())
	assert.Equal(t, string(want), got, "output differs from %s; if the change is intended, rerun with -update", path)
}
