//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Modes are Unix's: Windows keeps only a read-only attribute.
func TestWriteFileKeepsAnExistingModeAndReplaceDoesNot(t *testing.T) {
	for name, w := range writers() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "prd.json")
			require.NoError(t, w(path, []byte("new"), 0o600, true, nil))
			assert.Equal(t, os.FileMode(0o600), mode(t, path), "a new file gets perm")

			require.NoError(t, os.Chmod(path, 0o640))
			require.NoError(t, w(path, []byte("kept"), 0o600, true, nil))
			assert.Equal(t, os.FileMode(0o640), mode(t, path), "an existing file keeps its mode")

			require.NoError(t, w(path, []byte("private"), 0o600, false, nil))
			assert.Equal(t, os.FileMode(0o600), mode(t, path), "Replace sets perm")
		})
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}
