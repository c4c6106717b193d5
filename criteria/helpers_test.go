package criteria

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

func writeFile(t *testing.T, dir, name, content string) { gittest.WriteFile(t, dir, name, content) }

func runGit(t *testing.T, dir string, args ...string) string { return gittest.Run(t, dir, args...) }

func newRepo(t *testing.T) string { return gittest.NewRepo(t) }

func commitFile(t *testing.T, dir, name, content, subject string) string {
	return gittest.CommitFile(t, dir, name, content, subject)
}

func intPtr(n int) *int { return &n }

// realPath is path with its symlinks resolved (t.TempDir may sit under a
// symlinked directory, as on macOS).
func realPath(t *testing.T, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	return real
}
