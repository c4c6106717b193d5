package git

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// readBranch is the commit a branch (refs/heads/…) points to, read from
// the repository's files as git's files backend keeps them: the loose ref,
// else packed-refs. It saves the `git rev-parse` every task's start and
// every landing would otherwise run. ok is false for anything it does not
// read as git would: a repository it cannot find without git (Dir not the
// top of a plain checkout, nor pinned), one whose common directory another
// user owns (git's safe.directory check), the reftable backend, a symbolic
// ref, a ref absent from both files; the caller asks git then, which
// answers those or says why not. A branch always points to a commit (git
// moves none to anything else), so no peeling is needed.
func (g Repo) readBranch(ref string) (hash string, ok bool) {
	if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return "", false
	}
	common, ok := g.refsDir()
	if !ok {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); err == nil {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		return objectName(bytes.TrimSuffix(data, []byte("\n")))
	case !os.IsNotExist(err):
		return "", false
	}
	return packedRef(filepath.Join(common, "packed-refs"), ref)
}

// refsDir is the common git directory whose refs Dir's git reads, when
// ralph can tell it without git: the Pin's (intact, or git is asked and
// refuses), or Dir/.git when that is a directory ralph's user owns.
func (g Repo) refsDir() (string, bool) {
	if !g.Pin.IsZero() {
		return g.Pin.CommonDir, g.Pin.intact() == nil
	}
	dir := filepath.Join(g.Dir, ".git")
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() || !ownedBySelf(info) {
		return "", false
	}
	return dir, true
}

// packedRef is ref's object name in the packed-refs file at path.
func packedRef(path, ref string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		name, rest, found := bytes.Cut(line, []byte(" "))
		if found && string(rest) == ref {
			return objectName(name)
		}
	}
	return "", false
}

// objectName is b when it is a full object name (SHA-1 or SHA-256 hex).
func objectName(b []byte) (string, bool) {
	if len(b) != 40 && len(b) != 64 {
		return "", false
	}
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return string(b), true
}
