package swapfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	st, ok := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok)
	return st.Ino
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
