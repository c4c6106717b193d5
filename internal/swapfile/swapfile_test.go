package swapfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

func TestWriteReplacesTheContents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	for _, v := range []string{"one\n", "two, longer\n", "3\n"} {
		require.NoError(t, Write(path, []byte(v), nil))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, v, string(data))
	}
}

// A process killed before the swap leaves the old contents in place.
func TestBeforeTheSwapTheOldContentsHold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, Write(path, []byte("old"), nil))
	var during string
	require.NoError(t, Write(path, []byte("new"), func() {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		during = string(data)
	}))
	assert.Equal(t, "old", during)
}

func TestWithoutExchangeItRenames(t *testing.T) {
	noExchange.Store(true)
	t.Cleanup(func() { noExchange.Store(false) })
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	var hooked bool
	require.NoError(t, Write(path, []byte("a"), nil))
	require.NoError(t, Write(path, []byte("b"), func() { hooked = true }))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "b", string(data))
	assert.True(t, hooked)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no spare, no temporary file left")
}

// A spare a repository committed as a link is refused, not written
// through, and the file it points to keeps its contents.
func TestASpareThatIsALinkIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := filepath.Join(t.TempDir(), "precious.txt")
	require.NoError(t, os.WriteFile(outside, []byte("mine\n"), 0o644))
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, SpareName("state.json"))))

	err := Write(path, []byte("{}\n"), nil)
	var link *ralphdir.LinkError
	require.ErrorAs(t, err, &link)
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(data))
	_, err = os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing swapped in")
}

func TestTheFileAndItsSpareArePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no permission bits")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, Write(path, []byte("a"), nil))
	require.NoError(t, Write(path, []byte("b"), nil))
	for _, p := range []string{path, filepath.Join(filepath.Dir(path), SpareName("state.json"))} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}
}
