package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// Snapshot is one look at a workspace: the commit HEAD points to and a
// fingerprint of its files, so that two snapshots tell whether anything
// was committed and whether anything changed.
type Snapshot struct {
	// Head is the commit HEAD points to; "" before the first commit and
	// outside a repository.
	Head string
	// Fingerprint is a sha256 (hex) that changes exactly when a file
	// (tracked, or untracked and not ignored) changes, is staged, or a
	// commit is made. .ralph/ is left out.
	Fingerprint string
}

// statusArgs ask git for the whole state in one process: HEAD (in the
// branch.oid header), every changed, staged, unmerged or untracked path
// with the object names of its HEAD and index versions, untracked files
// one by one.
var statusArgs = append([]string{"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"}, scope()...)

// snapshot looks at a repository with one `git status`: its records give
// HEAD and what is staged, and the work-tree content of the paths it lists
// (read through files' cache, so that a file unchanged since the last
// snapshot is not read again) gives what is not. A path git does not list
// is identical to its committed version and adds nothing. Not a
// repository: the zero Snapshot and no error.
func (g Repo) snapshot(ctx context.Context, files *Tree) (Snapshot, error) {
	if !g.mayBeRepo() {
		return Snapshot{}, nil
	}
	out, err := g.run(ctx, statusArgs...)
	if isNotRepo(err) {
		return Snapshot{}, nil
	}
	if err != nil {
		return Snapshot{}, err
	}
	st := parseStatusV2(out)
	h := sha256.New()
	section(h, "head", []byte(st.head))
	for _, r := range st.records {
		section(h, "status", r)
	}
	if err := files.addFiles(ctx, h, st.paths); err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Head: st.head, Fingerprint: hex.EncodeToString(h.Sum(nil))}, nil
}

// mayBeRepo says whether Dir or a directory above it has a .git, the only
// way git finds a repository once gitEnv has dropped GIT_DIR: without one,
// asking git would cost a process to learn that there is none.
func (g Repo) mayBeRepo() bool {
	if !g.Pin.IsZero() {
		return true
	}
	dir, err := filepath.Abs(g.Dir)
	if err != nil {
		return true
	}
	_, ok := findDotGit(dir)
	return ok
}

// findDotGit returns the .git in dir or the nearest directory above it.
func findDotGit(dir string) (string, bool) {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return filepath.Join(dir, ".git"), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// findGitDirs finds, without running git, the repository directory of the
// work tree at dir (its HEAD and index) and the common directory (refs and
// objects), which differ in a linked worktree: there .git is a file that
// names the first, and the first names the second in its commondir file.
func findGitDirs(dir string) (gitDir, commonDir string, ok bool) {
	dotGit, ok := findDotGit(dir)
	if !ok {
		return "", "", false
	}
	gitDir = dotGit
	if fi, err := os.Stat(dotGit); err == nil && !fi.IsDir() {
		data, err := os.ReadFile(dotGit)
		target, found := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if err != nil || !found {
			return "", "", false
		}
		gitDir = relativeTo(filepath.Dir(dotGit), strings.TrimSpace(target))
	}
	commonDir = gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = relativeTo(gitDir, strings.TrimSpace(string(data)))
	}
	return gitDir, commonDir, true
}

func relativeTo(base, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(base, path)
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// statusV2 is what snapshot reads of `git status --porcelain=v2 -z`.
type statusV2 struct {
	head    string   // "" for "(initial)"
	records [][]byte // the entries, headers left out
	paths   []string // the work-tree paths the entries name
}

// parseStatusV2 reads the -z form: NUL-terminated records, "# " headers,
// then "1" (changed), "2" (renamed or copied: the record is followed by
// the original path as a record of its own), "u" (unmerged) and "?"
// (untracked) entries. The headers other than branch.oid (branch name,
// upstream, ahead/behind) say nothing about the files and are left out.
func parseStatusV2(out []byte) statusV2 {
	var st statusV2
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if len(rec) < 2 {
			continue
		}
		if oid, ok := bytes.CutPrefix(rec, []byte("# branch.oid ")); ok {
			if string(oid) != "(initial)" {
				st.head = string(oid)
			}
			continue
		}
		if rec[0] == '#' {
			continue
		}
		st.records = append(st.records, rec)
		if path, ok := entryPath(rec); ok {
			st.paths = append(st.paths, path)
		}
		if rec[0] == '2' && i+1 < len(fields) {
			i++ // the original path: gone from the work tree, or a copy's source
			st.records = append(st.records, fields[i])
		}
	}
	return st
}

// entryPath is the path an entry names: after a fixed number of
// space-separated fields, which paths (that may hold spaces) never are.
func entryPath(rec []byte) (string, bool) {
	var before int
	switch rec[0] {
	case '1':
		before = 8
	case '2':
		before = 9
	case 'u':
		before = 10
	case '?':
		before = 1
	default:
		return "", false
	}
	parts := strings.SplitN(string(rec), " ", before+1)
	if len(parts) != before+1 {
		return "", false
	}
	return parts[before], true
}

// ignoredDirs lists, as absolute paths, the directories below Dir that git
// ignores whole, which nothing in a snapshot depends on; none when git
// cannot say. A directory holding a tracked file is not ignored whole.
func (g Repo) ignoredDirs(ctx context.Context) []string {
	out, err := g.run(ctx, append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}, scope()...)...)
	if err != nil {
		return nil
	}
	dir, err := filepath.Abs(g.Dir)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if name, ok := bytes.CutSuffix(p, []byte("/")); ok && len(name) > 0 {
			dirs = append(dirs, filepath.Join(dir, filepath.FromSlash(string(name))))
		}
	}
	return dirs
}
