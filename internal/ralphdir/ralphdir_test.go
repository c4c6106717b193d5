package ralphdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outside is a file beyond .ralph/ with known contents, and a directory
// beside it, which no refused write may touch.
type outside struct {
	file, dir string
}

const outsideText = "the user's own file\n"

func newOutside(t *testing.T) outside {
	t.Helper()
	base := t.TempDir()
	o := outside{file: filepath.Join(base, "precious.txt"), dir: filepath.Join(base, "elsewhere")}
	require.NoError(t, os.WriteFile(o.file, []byte(outsideText), 0o644))
	require.NoError(t, os.Mkdir(o.dir, 0o755))
	return o
}

func (o outside) untouched(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(o.file)
	require.NoError(t, err)
	assert.Equal(t, outsideText, string(data), "the file the link points to is unchanged")
	entries, err := os.ReadDir(o.dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was made in the directory the link points to")
}

func workspace(t *testing.T) (ws, root string) {
	t.Helper()
	ws = t.TempDir()
	return ws, filepath.Join(ws, ".ralph")
}

func TestMakesPrivateDirectoriesAndFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no permission bits")
	}
	_, root := workspace(t)
	name := filepath.Join(root, "runs", "r1", "iter-0001.jsonl")
	require.NoError(t, WriteFile(root, name, []byte("x\n")))
	require.NoError(t, WriteFileAtomic(root, filepath.Join(root, "state.json"), []byte("{}\n")))
	for _, dir := range []string{root, filepath.Join(root, "runs"), filepath.Join(root, "runs", "r1")} {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, DirMode, fi.Mode().Perm(), dir)
	}
	for _, f := range []string{name, filepath.Join(root, "state.json")} {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, FileMode, fi.Mode().Perm(), f)
	}
}

func TestRefusesALinkAsTheFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	cases := map[string]func(root, name string) error{
		"write": func(root, name string) error { return WriteFile(root, name, []byte("overwritten\n")) },
		"append": func(root, name string) error {
			f, err := OpenFile(root, name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FileMode)
			if err == nil {
				_, err = f.WriteString("appended\n")
				_ = f.Close()
			}
			return err
		},
		"truncate": func(root, name string) error { return Truncate(root, name) },
		"read": func(root, name string) error {
			_, err := ReadFile(root, name)
			return err
		},
	}
	for what, do := range cases {
		t.Run(what, func(t *testing.T) {
			o := newOutside(t)
			_, root := workspace(t)
			require.NoError(t, os.Mkdir(root, 0o755))
			name := filepath.Join(root, "agent.pgid")
			require.NoError(t, os.Symlink(o.file, name))

			err := do(root, name)
			var link *LinkError
			require.ErrorAs(t, err, &link)
			assert.Equal(t, name, link.Path)
			assert.Equal(t, o.file, link.Target)
			assert.Contains(t, err.Error(), "is a symbolic link")
			assert.Contains(t, link.Hint(), "rm "+name)
			o.untouched(t)
		})
	}
}

func TestReplacesALinkRatherThanFollowIt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	o := newOutside(t)
	_, root := workspace(t)
	require.NoError(t, os.Mkdir(root, 0o755))
	name := filepath.Join(root, "current-events")
	require.NoError(t, os.Symlink(o.file, name))

	require.NoError(t, WriteFileAtomic(root, name, []byte(".ralph/events-1.jsonl\n")))
	fi, err := os.Lstat(name)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link itself was replaced")
	o.untouched(t)
}

func TestRefusesALinkAmongTheDirectories(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	cases := map[string]string{
		".ralph itself":        "",
		"a directory under it": "runs",
	}
	for what, linked := range cases {
		t.Run(what, func(t *testing.T) {
			o := newOutside(t)
			_, root := workspace(t)
			link := filepath.Join(root, linked)
			if linked == "" {
				link = root
			} else {
				require.NoError(t, os.Mkdir(root, 0o755))
			}
			require.NoError(t, os.Symlink(o.dir, link))
			name := filepath.Join(root, "runs", "r1", "iter-0001.jsonl")

			for _, err := range []error{
				WriteFile(root, name, []byte("x")),
				MkdirAll(root, filepath.Dir(name)),
				WriteFileAtomic(root, name, []byte("x")),
				CheckPath(root, filepath.Dir(name)),
			} {
				var le *LinkError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, link, le.Path)
			}
			if linked == "" {
				var le *LinkError
				require.ErrorAs(t, Check(root), &le)
			}
			o.untouched(t)
		})
	}
}

func TestRefusesAFileWhereADirectoryBelongs(t *testing.T) {
	_, root := workspace(t)
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "runs"), []byte("not a dir"), 0o644))
	err := MkdirAll(root, filepath.Join(root, "runs", "r1"))
	var nd *NotDirError
	require.ErrorAs(t, err, &nd)
	assert.Contains(t, err.Error(), "is not a directory (a file)")
}

func TestRefusesAnotherUsersDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	_, root := workspace(t)
	require.NoError(t, os.Mkdir(root, 0o777))
	require.NoError(t, os.Chown(root, 4242, 4242))
	err := WriteFile(root, filepath.Join(root, "stop"), []byte("now\n"))
	var oe *OwnerError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, 4242, oe.Owner)
	require.ErrorAs(t, Check(root), &oe)
	_, statErr := os.Lstat(filepath.Join(root, "stop"))
	assert.True(t, errors.Is(statErr, fs.ErrNotExist), "nothing written")
}

func TestMissingIsNotARefusal(t *testing.T) {
	_, root := workspace(t)
	require.NoError(t, Check(root))
	_, err := ReadFile(root, filepath.Join(root, "runs", "r1", "summary.md"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, Truncate(root, filepath.Join(root, "agent.pgid")))
	_, err = os.Lstat(root)
	assert.ErrorIs(t, err, fs.ErrNotExist, "reading and truncating make nothing")
}

func TestRefusesAPathOutsideRoot(t *testing.T) {
	ws, root := workspace(t)
	err := WriteFile(root, filepath.Join(ws, "elsewhere", "x"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not under "+root)
}
