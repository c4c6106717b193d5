package swapfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	st, ok := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok)
	return st.Ino
}

func TestWriteReplacesTheContents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	for _, v := range []string{"one\n", "two, longer\n", "3\n"} {
		require.NoError(t, Write(path, []byte(v), nil))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, v, string(data))
	}
}

// After the first two writes no file is created or deleted: the file and
// its spare trade places.
func TestWriteReusesTwoFiles(t *testing.T) {
	if noExchange.Load() {
		t.Skip("this file system refuses RENAME_EXCHANGE")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	require.NoError(t, Write(path, []byte("1"), nil))
	require.NoError(t, Write(path, []byte("2"), nil))
	if noExchange.Load() {
		t.Skip("this file system refuses RENAME_EXCHANGE")
	}
	spare := filepath.Join(dir, SpareName("state.json"))
	inodes := map[uint64]bool{inode(t, path): true, inode(t, spare): true}
	for _, v := range []string{"3", "4", "5"} {
		require.NoError(t, Write(path, []byte(v), nil))
		assert.True(t, inodes[inode(t, path)], "no new file")
		assert.True(t, inodes[inode(t, spare)], "no new spare")
	}
	old, err := os.ReadFile(spare)
	require.NoError(t, err)
	assert.Equal(t, "4", string(old), "the spare holds the contents before the last write")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the file and its spare, nothing else")
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
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, Write(path, []byte("a"), nil))
	require.NoError(t, Write(path, []byte("b"), nil))
	for _, p := range []string{path, filepath.Join(filepath.Dir(path), SpareName("state.json"))} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}
}
