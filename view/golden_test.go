package view

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files under testdata/ from the current output
// (`make golden`, or go test ./view/ -run NAME -update).
var update = flag.Bool("update", false, "rewrite testdata/**/*.golden from the current output")

// assertGolden compares got with testdata/<name>, or rewrites it with
// -update.
func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file; run go test ./view/ -run %s -update", t.Name())
	assert.Equal(t, string(want), got, "output differs from %s; if the change is intended, rerun with -update", path)
}
