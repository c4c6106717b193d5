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
// from a work tree and what git runs there, as far as an agent confined to
// the work tree can write it: the .git found from the work tree (a
// directory, which must stay the same directory, or a file, whose content
// names the git directory); a git directory inside the work tree (a main
// checkout's .git) with its config, config.worktree, commondir and every
// hook; of a linked worktree's git directory, which the sandbox grants,
// its commondir and config.worktree. Git runs what a config names
// (core.fsmonitor, a filter's clean command, core.sshCommand, …) and what
// a hook is; an agent that can write any of these (Landlock grants a main
// checkout's .git with the rest of the workspace; under bubblewrap it can
// still put .git aside, or add a commondir) can have ralph's own git,
// which is not confined, run its code. A pinned Repo's git reads no .git:
// its Controls are the pinned git directory's commondir, which git still
// reads for refs (a pinned Repo refuses to run when it names another
// directory), and config.worktree.
//
// A linked worktree's common directory (its repository's config and hooks)
// is out of the agent's reach and left out: ralph itself writes that
// config beside a running loop (a branch's settings). .git/info/attributes
// is left out: attributes only name a filter or a diff driver, whose
// command must be in a config, and the work tree's own .gitattributes,
// which the agent writes anyway, can do as much.
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
		c.worktreeEntry(g.Pin.GitDir)
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
	switch {
	case !ok:
	case within(gitDir, dir):
		c.repository(gitDir)
		if common != gitDir && within(common, dir) {
			c.repository(common)
		}
	case !info.IsDir():
		c.worktreeEntry(gitDir)
	}
	return *c
}

// repository adds the controls of a git directory in the agent's reach.
func (c *Controls) repository(gitDir string) {
	c.worktreeEntry(gitDir)
	c.file(filepath.Join(gitDir, "config"))
	c.hooks(filepath.Join(gitDir, "hooks"))
}

// worktreeEntry adds what of a git directory says where the repository is
// (commondir) and adds to its config (config.worktree).
func (c *Controls) worktreeEntry(gitDir string) {
	c.file(filepath.Join(gitDir, "commondir"))
	c.file(filepath.Join(gitDir, "config.worktree"))
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
		_, known := c.files[path]
		if !known && (slices.Contains(c.hookDirs, filepath.Dir(path)) || filepath.Base(path) == ".git") {
			out = append(out, path) // a hook added, a .git found first
		}
	}
	for path, was := range c.dirs {
		is, ok := now.dirs[path]
		if !ok {
			// Not what git finds now: a change when it is not there as
			// it was either (else the .git git finds first is new).
			is, _ = os.Stat(path)
		}
		if is == nil || !os.SameFile(was, is) {
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
