// Package ralphdir is how ralph makes and opens its own files in a
// workspace's .ralph/ directory: never through a symbolic link, only in
// directories of the user's own, and readable by the user alone.
//
// A repository can commit anything under .ralph/, links included (`git add
// -f`), and every clone and worktree of it checks them out. ralph's files
// there are its own, made on first use and kept out of git by
// .ralph/.gitignore, so a link among them is never ralph's: followed, it
// would have ralph truncate, overwrite or create files wherever the user
// can write. So:
//
//   - .ralph itself, and every directory ralph makes or enters under it,
//     must be a real directory (checked with lstat) that the user owns
//     ([MkdirAll]);
//   - files are opened with O_NOFOLLOW ([OpenFile], [WriteFile],
//     [ReadFile]), or replaced by writing a temporary file beside them and
//     renaming it over them ([WriteFileAtomic]), which replaces a link
//     rather than follows it.
//
// A refusal is a *[LinkError], *[NotDirError] or *[OwnerError], each with
// a hint that says how to fix it.
//
// What ralph keeps there holds what agents printed and published (event
// payloads, raw output, activity, notes), and an agent's output can hold a
// secret: directories are made 0700 and files 0600 ([DirMode],
// [FileMode]).
//
// The directories are checked before a file is opened, not as part of the
// open: this guards against what a repository brings, not against a
// process that swaps a directory for a link while ralph works.
//
// The package is a leaf helper that imports nothing of ralph's but
// internal/atomicfile.
package ralphdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	"github.com/ralph-loop/ralph/internal/atomicfile"
)

// Modes of what ralph makes under .ralph/: for the user alone.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// fixLink is the part of every link refusal's hint that says why removing
// the link loses nothing.
const fixLink = "ralph makes its files in .ralph/ itself and never commits them (.ralph/.gitignore keeps them out of git); " +
	"if the repository has the link committed, `git rm --cached` takes it out"

// LinkError is a symbolic link where ralph keeps a file or directory of
// its own.
type LinkError struct {
	Path   string
	Target string // where the link points, "" when it cannot be read
}

func (e *LinkError) Error() string {
	to := ""
	if e.Target != "" {
		to = " (to " + e.Target + ")"
	}
	return fmt.Sprintf("%s is a symbolic link%s; ralph does not follow links where it keeps its own files", e.Path, to)
}

func (e *LinkError) Hint() string {
	return fmt.Sprintf("remove the link (`rm %s`) and run ralph again: %s", quote(e.Path), fixLink)
}

// NotDirError is something other than a directory where ralph keeps one.
type NotDirError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotDirError) Error() string {
	return fmt.Sprintf("%s is not a directory (%s); ralph keeps its own files in it", e.Path, describeMode(e.Mode))
}

func (e *NotDirError) Hint() string {
	return fmt.Sprintf("move it away (`mv %s %s.old`) and run ralph again: %s", quote(e.Path), quote(e.Path), fixLink)
}

// OwnerError is a directory of ralph's that belongs to another user: its
// owner could put links in it, or read what ralph writes there.
type OwnerError struct {
	Path     string
	Owner    int // its owner's uid
	Expected int // the uid ralph runs as
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("%s belongs to uid %d, not to uid %d that ralph runs as; ralph keeps its files only in a directory of your own", e.Path, e.Owner, e.Expected)
}

func (e *OwnerError) Hint() string {
	return fmt.Sprintf("run ralph as the directory's owner, or remove it (`rm -r %s`) so that ralph makes its own", quote(e.Path))
}

// Check reports whether dir may hold ralph's files: a real directory, not
// a link, that the user owns. One that does not exist passes (ralph makes
// it).
func Check(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkDir(dir, fi)
}

// MkdirAll makes dir, which is root or a directory under it, and every
// directory in between (mode 0700), and checks each of them from root
// down, as Check does: a link, a file or another user's directory among
// them is refused. root is .ralph/; its parent (the workspace) is made
// when missing.
func MkdirAll(root, dir string) error {
	parts, err := partsUnder(root, dir)
	if err != nil {
		return err
	}
	if err := mkdirChecked(root); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
			return err
		}
		err = mkdirChecked(root)
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	path := root
	for _, p := range parts {
		path = filepath.Join(path, p)
		if err := mkdirChecked(path); err != nil {
			return err
		}
	}
	return nil
}

// CheckPath checks, as MkdirAll does but without making anything, the
// directories from root down to dir; one missing is an error that
// matches fs.ErrNotExist.
func CheckPath(root, dir string) error {
	parts, err := partsUnder(root, dir)
	if err != nil {
		return err
	}
	path := root
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			path = filepath.Join(path, parts[i])
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if err := checkDir(path, fi); err != nil {
			return err
		}
	}
	return nil
}

// OpenFile opens name, a file under root, as os.OpenFile does, but never
// through a link: the directories from root down to name's are checked
// (and made, 0700, when flag has O_CREATE), and a link at name itself is
// refused with a *LinkError.
func OpenFile(root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	var err error
	if flag&os.O_CREATE != 0 {
		err = MkdirAll(root, filepath.Dir(name))
	} else {
		err = CheckPath(root, filepath.Dir(name))
	}
	if err != nil {
		return nil, err
	}
	f, err := openNoFollow(name, flag, perm)
	if err != nil {
		return nil, Explain(name, err)
	}
	return f, nil
}

// WriteFile writes data to name under root, as os.WriteFile does with
// mode 0600, never through a link.
func WriteFile(root, name string, data []byte) error {
	f, err := OpenFile(root, name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, FileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// ReadFile reads name under root, as os.ReadFile does, never through a
// link.
func ReadFile(root, name string) ([]byte, error) {
	f, err := OpenFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Truncate empties name under root, when it exists, never through a link.
func Truncate(root, name string) error {
	f, err := OpenFile(root, name, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return errors.Join(f.Truncate(0), f.Close())
}

// WriteFileAtomic replaces name under root with data (mode 0600 when it
// is new) so that a reader sees the old file or the new one, never a mix:
// the data goes to a temporary file beside it, renamed over it. A link at
// name is replaced, not followed.
func WriteFileAtomic(root, name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := MkdirAll(root, dir); err != nil {
		return err
	}
	return atomicfile.WriteFile(name, data, FileMode)
}

// WriteFileAtomicUnsynced is WriteFileAtomic without flushing the data to
// stable storage (atomicfile.WriteFileUnsynced): for a checkpoint of a
// synced log, or a file for people, written after every event.
func WriteFileAtomicUnsynced(root, name string, data []byte) error {
	if err := MkdirAll(root, filepath.Dir(name)); err != nil {
		return err
	}
	return atomicfile.WriteFileUnsynced(name, data, FileMode)
}

// NotLink returns a *LinkError when path is a link, for a reader that
// opens it by a library's means; nil otherwise, also when it is missing.
func NotLink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return linkError(path)
	}
	return nil
}

// Explain turns the error of opening path without following a link into a
// *LinkError when path is a link; any other error is returned as it is.
func Explain(path string, err error) error {
	if err == nil {
		return nil
	}
	if linkErr := NotLink(path); linkErr != nil {
		return linkErr
	}
	return err
}

// mkdirChecked makes path (0700) unless it exists, and checks it.
func mkdirChecked(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(path, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return err
	}
	return checkDir(path, fi)
}

func checkDir(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return linkError(path)
	case !fi.IsDir():
		return &NotDirError{Path: path, Mode: fi.Mode()}
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return &OwnerError{Path: path, Owner: uid, Expected: os.Getuid()}
	}
	return nil
}

func linkError(path string) *LinkError {
	target, _ := os.Readlink(path)
	return &LinkError{Path: path, Target: target}
}

// partsUnder splits dir's path below root into its directories.
func partsUnder(root, dir string) ([]string, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is not under %s", dir, root)
	}
	if rel == "." {
		return nil, nil
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a file"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// quote puts path in single quotes for a shell when it needs them.
func quote(path string) string {
	if strings.IndexFunc(path, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// Lock is a lock (gofrs/flock) on the file at path, which it makes 0600
// and never opens through a link: an error of a try to lock it is one of
// opening it, for Explain.
func Lock(path string) *flock.Flock {
	return flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|NoFollow), flock.SetPermissions(FileMode))
}

// Name is the name of ralph's directory in a workspace. Package runfiles
// owns what is in it; the helpers below the domain (internal/git, which
// leaves it out of a workspace's changes) know only its name.
const Name = ".ralph"
