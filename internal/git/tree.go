package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Defaults that bound what one Tree.Fingerprint costs.
const (
	// DefaultTreeMaxEntries bounds the files and directories one scan
	// visits: one lstat each, so a scan stays well under a second even
	// where an agent unpacked node_modules.
	DefaultTreeMaxEntries = 100_000
	// DefaultTreeMaxFileBytes is the largest file whose content is read;
	// larger ones (archives, datasets, build outputs) count by size and
	// modification time.
	DefaultTreeMaxFileBytes = 1 << 20
	// DefaultTreeReadBudget bounds the bytes one scan reads. Only new and
	// changed files are read (see Tree), so it matters on the first scan
	// of a large tree; past it, files count by size and modification time.
	DefaultTreeReadBudget = 64 << 20
)

// racyWindow is how recent a file's modification time may be for its
// content hash to be trusted on the next scan without reading the file
// again. A write in the same clock tick as the read that cached the hash
// leaves size and mtime unchanged (git calls this "racily clean"); 2s
// covers the coarsest filesystem clocks (FAT) and a little clock skew.
const racyWindow = 2 * time.Second

// vcsDirs are the version-control directories a scan skips wherever they
// are: their contents change when the agent commits or fetches, which
// says nothing new about the work tree beside them.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, ".jj": true, "_darcs": true, ".fossil": true}

// Tree fingerprints a workspace that git cannot describe (not a
// repository, or no git installed) by walking it: for each file its path
// and a sha256 of its content, so that rewriting a file with what it
// already held is no change, as with git. ralph's own .ralph/ at the top
// and version-control directories anywhere are skipped; empty directories
// count for nothing, as with git.
//
// The cost is bounded: a scan visits at most MaxEntries entries (in name
// order; changes past them are not seen), reads only files of at most
// MaxFileBytes and at most ReadBudget bytes in all, and counts the other
// files by size, mode and modification time. A Tree remembers what it read,
// like git's index: a file whose size, mode and modification time are
// unchanged since the last scan is not read again, so after the first scan
// a scan costs one lstat per entry plus the reading of changed files.
//
// A Tree is safe for concurrent use; use a pointer, so the cache survives.
type Tree struct {
	Dir string
	// Limits; zero means the Default* value.
	MaxEntries   int
	MaxFileBytes int64
	ReadBudget   int64
	// Now is the clock the racy-file check compares modification times
	// with; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]treeEntry
}

// treeEntry is what a scan learned about one file.
type treeEntry struct {
	size  int64
	mode  fs.FileMode
	mtime time.Time
	// sum is the content's sha256, or nil when the file counts by its
	// metadata (too large, over the budget, or unreadable).
	sum []byte
	// settled is set when the file had not been modified for racyWindow
	// when it was read, so equal metadata later means equal content.
	settled bool
}

func (e treeEntry) sameMeta(o treeEntry) bool {
	return e.size == o.size && e.mode == o.mode && e.mtime.Equal(o.mtime)
}

// Fingerprint is a sha256 (hex) of the files under Dir. Two calls return
// the same value exactly when no file (within the limits) was added,
// removed, or changed in content, mode or, for files counted by their
// metadata, size or modification time.
func (t *Tree) Fingerprint(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// WalkDir does not follow a symlinked root: resolve it first.
	root, err := filepath.EvalSymlinks(t.Dir)
	if err != nil {
		return "", fmt.Errorf("fingerprint %s: %w", t.Dir, err)
	}
	s := &treeScan{t: t, root: root, ctx: ctx, h: sha256.New(), next: map[string]treeEntry{},
		started: t.now(), budget: orDefault(t.ReadBudget, DefaultTreeReadBudget)}
	if err := filepath.WalkDir(root, s.visit); err != nil {
		return "", fmt.Errorf("fingerprint %s: %w", t.Dir, err)
	}
	t.cache = s.next
	return hex.EncodeToString(s.h.Sum(nil)), nil
}

// addFiles adds the files at rels (relative to Dir, as git lists them)
// to h as a scan would, reading only those whose metadata changed since
// they were last read. The cache keeps only these files: a workspace in a
// repository has its files listed by git, not walked.
func (t *Tree) addFiles(ctx context.Context, h hash.Hash, rels []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &treeScan{t: t, root: t.Dir, ctx: ctx, h: h, next: map[string]treeEntry{},
		started: t.now(), budget: orDefault(t.ReadBudget, DefaultTreeReadBudget)}
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(t.Dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(path)
		if err := s.add(path, rel, fi, err); err != nil {
			return fmt.Errorf("fingerprint %s: %w", path, err)
		}
	}
	t.cache = s.next
	return nil
}

func (t *Tree) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// treeScan is one walk of a Tree.
type treeScan struct {
	t       *Tree
	root    string
	ctx     context.Context
	h       hash.Hash
	next    map[string]treeEntry
	started time.Time
	entries int
	budget  int64
	buf     []byte
}

func (s *treeScan) visit(path string, d fs.DirEntry, err error) error {
	rel, relErr := filepath.Rel(s.root, path)
	switch {
	case relErr != nil:
		return relErr
	case err != nil && rel == ".":
		return err
	case err != nil:
		// An unreadable directory or a file gone mid-walk: its name is
		// all there is to fingerprint.
		section(s.h, "unreadable", []byte(rel))
		if d != nil && d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	case rel == ".":
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if d.IsDir() && (vcsDirs[d.Name()] || rel == StateDir) {
		return filepath.SkipDir
	}
	s.entries++
	if s.entries > orDefault(s.t.MaxEntries, DefaultTreeMaxEntries) {
		section(s.h, "truncated", nil)
		return filepath.SkipAll
	}
	if d.IsDir() {
		return nil
	}
	return s.file(path, rel, d)
}

// file adds one non-directory entry.
func (s *treeScan) file(path, rel string, d fs.DirEntry) error {
	fi, err := d.Info()
	return s.add(path, rel, fi, err)
}

// add adds one file, as lstat saw it.
func (s *treeScan) add(path, rel string, fi fs.FileInfo, err error) error {
	section(s.h, "path", []byte(rel))
	if errors.Is(err, fs.ErrNotExist) {
		section(s.h, "gone", nil)
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			section(s.h, "unreadable", nil)
			return nil
		}
		section(s.h, "symlink", []byte(target))
	case !fi.Mode().IsRegular():
		section(s.h, "special", []byte(fi.Mode().String()))
	default:
		e := s.regular(path, rel, fi)
		s.next[rel] = e
		section(s.h, "mode", []byte(e.mode.String()))
		if e.sum != nil {
			section(s.h, "content", e.sum)
		} else {
			section(s.h, "meta", fmt.Appendf(nil, "%d %d", e.size, e.mtime.UnixNano()))
		}
	}
	return nil
}

// regular is a regular file's entry: the cached one when its metadata is
// unchanged and its hash settled, else a fresh read within the limits.
func (s *treeScan) regular(path, rel string, fi fs.FileInfo) treeEntry {
	e := treeEntry{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime()}
	if old, ok := s.t.cache[rel]; ok && old.sameMeta(e) && (old.settled || old.sum == nil) {
		return old
	}
	if e.size > orDefault(s.t.MaxFileBytes, DefaultTreeMaxFileBytes) || e.size > s.budget {
		return e
	}
	sum, n, err := s.hashContent(path)
	s.budget -= n
	if err != nil {
		return e // unreadable: count it by its metadata
	}
	e.sum = sum
	e.settled = e.mtime.Before(s.started.Add(-racyWindow))
	return e
}

// hashContent is the sha256 of a file's content and how many bytes it read.
// It reads through one buffer per scan: io.Copy would allocate 32 KiB per
// file, which on a cold scan of thousands of small files is most of the
// cost.
func (s *treeScan) hashContent(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if s.buf == nil {
		s.buf = make([]byte, 64*1024)
	}
	h := sha256.New()
	var total int64
	for {
		n, err := f.Read(s.buf)
		h.Write(s.buf[:n])
		total += int64(n)
		if errors.Is(err, io.EOF) {
			return h.Sum(nil), total, nil
		}
		if err != nil {
			return nil, total, err
		}
	}
}

func orDefault[T int | int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
