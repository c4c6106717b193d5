package autopilot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A claim is committed only when the tracker's files changed, which their
// stamp tells without git: a file's content, a file added to or removed
// from a directory, and a file that appears where there was none.
func TestStampFilesSeesEveryChangeToTheTrackersFiles(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".tickets"), 0o755))
	write := func(name, text string, at time.Time) {
		path := filepath.Join(root, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		require.NoError(t, os.Chtimes(path, at, at))
	}
	then := time.Now().Add(-time.Hour)
	write(".tickets/a.md", "status: open\n", then)
	write("TODO.md", "- [ ] a\n", then)
	files := []string{".tickets", "TODO.md", "prd.json"}
	stamp := stampFiles(root, files)
	assert.Equal(t, stamp, stampFiles(root, files), "nothing changed")

	write("TODO.md", "- [x] a\n", then.Add(time.Millisecond))
	changed := stampFiles(root, files)
	assert.NotEqual(t, stamp, changed, "a file rewritten at its size, later")

	write(".tickets/b.md", "status: open\n", then)
	added := stampFiles(root, files)
	assert.NotEqual(t, changed, added, "a file added to a directory")

	require.NoError(t, os.Remove(filepath.Join(root, ".tickets", "a.md")))
	removed := stampFiles(root, files)
	assert.NotEqual(t, added, removed, "a file removed")

	write("prd.json", "{}\n", then)
	assert.NotEqual(t, removed, stampFiles(root, files), "a file where there was none")
}
