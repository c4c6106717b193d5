package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writer is one of the package's two ways to write: renameio's (Unix) or
// its own (Windows), which Linux tests run too.
type writer func(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func()) error

func writers() map[string]writer {
	return map[string]writer{
		"this system's": write,
		"write-then-rename": func(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func()) error {
			return writeRename(path, data, perm, keepMode, beforeRename, os.Rename)
		},
		"unflushed": func(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func()) error {
			return writeRenameSync(path, data, perm, keepMode, beforeRename, renameFile, false)
		},
	}
}

func TestWriteReplacesAndLeavesNothingBeside(t *testing.T) {
	for name, w := range writers() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			require.NoError(t, w(path, []byte("one"), 0o600, true, nil))
			require.NoError(t, w(path, []byte("two"), 0o600, true, nil))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "two", string(got))
			assert.Equal(t, []string{"state.json"}, names(t, dir), "no temporary file left")
		})
	}
}

// The hook runs when the new contents are complete in the temporary file
// and the old ones still in place: a crash there loses nothing.
func TestBeforeRenameSeesOldFileAndCompleteNewOne(t *testing.T) {
	for name, w := range writers() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
			ran := false
			require.NoError(t, w(path, []byte("new"), 0o600, false, func() {
				ran = true
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, "old", string(got))
				var temps []string
				for _, n := range names(t, dir) {
					if strings.HasPrefix(n, ".state.json") {
						temps = append(temps, n)
					}
				}
				require.Len(t, temps, 1, "the temporary file is beside the file, named as renameio names it")
				data, err := os.ReadFile(filepath.Join(dir, temps[0]))
				require.NoError(t, err)
				assert.Equal(t, "new", string(data))
			}))
			assert.True(t, ran)
		})
	}
}

// A link at the path is replaced by the file, and what it pointed to is
// untouched.
func TestWriteReplacesALinkRatherThanFollowsIt(t *testing.T) {
	for name, w := range writers() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "target")
			require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
			path := filepath.Join(dir, "state.json")
			if err := os.Symlink(target, path); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			require.NoError(t, w(path, []byte("new"), 0o600, true, nil))
			fi, err := os.Lstat(path)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular())
			got, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "keep", string(got))
		})
	}
}

// A failed write leaves the file as it was and no temporary file.
func TestFailedRenameLeavesFileAndNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	refused := errors.New("refused")
	err := writeRename(path, []byte("new"), 0o600, false, nil, func(string, string) error { return refused })
	require.ErrorIs(t, err, refused)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
	assert.Equal(t, []string{"state.json"}, names(t, dir))
}

func TestRetryStopsAtSuccessAtAnotherErrorAndAtTheBound(t *testing.T) {
	busy, other := errors.New("busy"), errors.New("other")
	transient := func(err error) bool { return errors.Is(err, busy) }

	tries := 0
	err := retry(func() error {
		tries++
		if tries < 3 {
			return busy
		}
		return nil
	}, transient, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 3, tries)

	tries = 0
	err = retry(func() error { tries++; return other }, transient, time.Hour)
	require.ErrorIs(t, err, other)
	assert.Equal(t, 1, tries, "an error that will not pass is not retried")

	tries = 0
	err = retry(func() error { tries++; return busy }, transient, 0)
	require.ErrorIs(t, err, busy)
	assert.Equal(t, 1, tries, "no time left: one try")
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestIsTemp knows the temporary files this package makes, by the names
// it gives them, and none of ralph's own files.
func TestIsTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	var made string
	require.NoError(t, Replace(path, []byte("{}"), 0o600, func() {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1)
		made = entries[0].Name()
	}))
	assert.True(t, IsTemp(made), made)
	for _, name := range []string{"state.json", ".gitignore", ".state.json.spare", ".v2", "events-20261128-093818.jsonl", ".123456", "iter-0001.jsonl"} {
		assert.False(t, IsTemp(name), name)
	}
}
