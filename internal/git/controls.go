package git

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Controls is a fingerprint of what decides which repository git finds
// from a work tree and what git runs there: the .git found from the work
// tree (a directory, which must stay the same directory, or a file, whose
// content names the git directory), the git directory's config,
// config.worktree and commondir, the common directory's config, and every
// hook. Git runs what a config names (core.fsmonitor, a filter's clean
// command, core.sshCommand, …) and what a hook is; an agent that can write
// any of these (Landlock grants a main checkout's .git with the rest of
// the workspace; under bubblewrap it can still put .git aside, or add a
// commondir) can have ralph's own git, which is not confined, run its
// code. A pinned Repo's git reads no .git: its Controls are the pinned
// directories' config, config.worktree and hooks, and the commondir file,
// which git still reads for refs (a pinned Repo refuses to run when it
// names another directory).
//
// .git/info/attributes is left out: attributes only name a filter or a
// diff driver, whose command must be in a config, and the work tree's own
// .gitattributes, which the agent writes anyway, can do as much.
type Controls struct {
	// files are each control file's content digest and mode, or "absent".
	files map[string]string
	// dirs are the directories that must stay the same one (a main
	// checkout's .git): renaming it away and putting another in its
	// place changes no file's content.
	dirs map[string]os.FileInfo
	// hookDirs are the hooks directories read: a file new in one is a
	// hook added.
	hookDirs []string
}

// Controls reads g's controls now. It starts no git process: it is read
// before and after every confined agent, and git is what it guards.
func (g Repo) Controls() Controls {
	c := &Controls{files: map[string]string{}, dirs: map[string]os.FileInfo{}}
	if !g.Pin.IsZero() {
		// Its refs still follow commondir (see Pin).
		c.file(filepath.Join(g.Pin.GitDir, "commondir"))
		c.repository(g.Pin.GitDir, g.Pin.CommonDir)
		return *c
	}
	dir, err := filepath.Abs(g.Dir)
	if err != nil {
		return *c
	}
	dotGit, ok := findDotGit(dir)
	if !ok {
		// None yet: one the agent makes (git init) is a change.
		c.files[filepath.Join(dir, ".git")] = absent
		return *c
	}
	info, err := os.Stat(dotGit)
	switch {
	case err != nil:
		c.file(dotGit)
		return *c
	case info.IsDir():
		c.dirs[dotGit] = info
	default:
		c.file(dotGit)
	}
	gitDir, common, ok := findGitDirs(dir)
	if ok {
		c.file(filepath.Join(gitDir, "commondir"))
		c.repository(gitDir, common)
	}
	return *c
}

// repository adds the controls inside a repository's git directory and
// common directory (the same directory outside a linked worktree).
func (c *Controls) repository(gitDir, common string) {
	c.file(filepath.Join(gitDir, "config.worktree"))
	for _, d := range []string{gitDir, common} {
		c.file(filepath.Join(d, "config"))
		c.hooks(filepath.Join(d, "hooks"))
	}
}

const absent = "absent"

// file records path's content and mode (through a link: git reads what
// it leads to), or that it is absent or unreadable.
func (c Controls) file(path string) {
	if _, done := c.files[path]; done {
		return
	}
	c.files[path] = digest(path)
}

// hooks records every entry of a hooks directory (git runs
// hooks/<name>), or that there is none to read.
func (c *Controls) hooks(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		c.file(dir)
		return
	}
	c.hookDirs = append(c.hookDirs, dir)
	for _, e := range entries {
		c.file(filepath.Join(dir, e.Name()))
	}
}

// digest is what a control file is: its mode (a hook made executable is a
// hook armed) and the sha256 of its content; a directory's mode alone.
func digest(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return absent
		}
		return "unreadable: " + err.Error()
	}
	if info.IsDir() {
		return fmt.Sprintf("dir %v", info.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%v %s", info.Mode(), hex.EncodeToString(h.Sum(nil)))
}

// Changed lists, sorted, what differs in now from c: a control file
// changed, made or removed, a hook added, a directory that is not the same
// one. What lies inside a path it lists is not listed again: a .git put
// aside is .git, not each of its files; nor is what a changed control now
// leads to (the config of the repository a new commondir names).
func (c Controls) Changed(now Controls) []string {
	var out []string
	for path, was := range c.files {
		if is, ok := now.files[path]; !ok || is != was {
			out = append(out, path)
		}
	}
	for path := range now.files {
		if _, ok := c.files[path]; !ok && slices.Contains(c.hookDirs, filepath.Dir(path)) {
			out = append(out, path)
		}
	}
	for path, was := range c.dirs {
		if is, ok := now.dirs[path]; !ok || !os.SameFile(was, is) {
			out = append(out, path)
		}
	}
	for path := range now.dirs {
		if _, ok := c.dirs[path]; !ok {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(p string) bool {
		return slices.ContainsFunc(out, func(q string) bool { return q != p && within(p, q) })
	})
}
