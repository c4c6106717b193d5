package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// rules are an Agent's confinement as concrete paths: absolute, cleaned,
// symbolic links resolved (Landlock grants on inodes and bwrap binds resolved
// paths), existing. Everything not denied is readable and executable. They
// are also the Landlock launcher's spec, hence the JSON names.
type rules struct {
	// WriteDirs and WriteFiles are writable, with all beneath them.
	WriteDirs  []string `json:"write_dirs,omitempty"`
	WriteFiles []string `json:"write_files,omitempty"`
	// Devices are the device files (and /dev/pts, /dev/shm) a program
	// writes to as a matter of course.
	Devices []string `json:"devices,omitempty"`
	// Deny are unreadable, but for the writable paths inside them.
	Deny []string `json:"deny,omitempty"`
	// NetDeny leaves only loopback.
	NetDeny bool `json:"net_deny,omitempty"`
	// ReadOnly are paths inside a writable tree kept read-only where the
	// mechanism can carve them out (bubblewrap, Seatbelt; not Landlock,
	// whose grants cover a whole tree): the git config and hooks of a
	// workspace that is a repository's main checkout, which git, ralph's
	// or yours, would otherwise run commands from outside the sandbox.
	ReadOnly []string `json:"read_only,omitempty"`
}

// gitProtected are the parts of a checkout's .git directory that say what
// git runs: hooks, and the config that can name more (core.hooksPath,
// core.fsmonitor, filters, aliases).
var gitProtected = []string{"config", "hooks"}

// devices are writable wherever they exist: the bit buckets, the terminal
// and pseudo-terminals, and POSIX shared memory (which Python's
// multiprocessing and Chromium use).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}

// buildRules resolves a into rules; tmp is the private temporary directory
// ("" when there is none yet). With makeDirs, the state directories and the
// git branch's ref directories are made when missing, so that they can be
// granted; without it (Denied, after the fact) nothing is touched.
func buildRules(a Agent, tmp string, makeDirs bool) (rules, error) {
	var r rules
	var writable []string
	if a.Workspace == "" {
		return r, errors.New("sandbox: no workspace to confine the agent to")
	}
	writable = append(writable, a.Workspace)
	if tmp != "" {
		writable = append(writable, tmp)
	}
	for _, s := range a.State {
		if makeDirs {
			if err := makeStateDir(s, a.Home); err != nil {
				return r, err
			}
		}
		writable = append(writable, s)
	}
	writable = append(writable, a.Write...)
	writable = append(writable, a.Policy.Write...)
	git, err := gitWritable(a, makeDirs)
	if err != nil {
		return r, err
	}
	writable = append(writable, git...)
	for _, p := range writable {
		resolved, info, ok := existing(p)
		switch {
		case !ok:
		case info.IsDir():
			r.WriteDirs = appendNew(r.WriteDirs, resolved)
		default:
			r.WriteFiles = appendNew(r.WriteFiles, resolved)
		}
	}
	for _, d := range devices {
		if resolved, _, ok := existing(d); ok {
			r.Devices = appendNew(r.Devices, resolved)
		}
	}
	r.Deny = r.denied(append(DefaultDenyRead(a.Home), a.Policy.DenyRead...))
	r.ReadOnly = gitReadOnly(a.Workspace)
	r.NetDeny = a.Policy.Denies()
	slices.Sort(r.WriteDirs)
	slices.Sort(r.WriteFiles)
	return r, nil
}

// denied keeps the paths that exist and are neither writable nor inside a
// writable path (a tree Landlock grants cannot lose a part of it; see
// Policy.DenyRead). One that contains a writable path stays: the rest of
// it is hidden, the writable path inside is not.
func (r rules) denied(paths []string) []string {
	var out []string
	for _, p := range paths {
		resolved, _, ok := existing(p)
		if !ok || r.writable(resolved) {
			continue
		}
		out = appendNew(out, resolved)
	}
	slices.Sort(out)
	return out
}

// writable says whether p is, or lies inside, a writable path.
func (r rules) writable(p string) bool {
	for _, w := range r.WriteDirs {
		if within(p, w) {
			return true
		}
	}
	return slices.Contains(r.WriteFiles, p)
}

// hidden says whether p is, or lies inside, a denied path.
func (r rules) hidden(p string) bool {
	for _, d := range r.Deny {
		if within(p, d) {
			return true
		}
	}
	return false
}

// within says whether p is dir or lies beneath it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return filepath.IsAbs(p)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// existing cleans p and resolves its links; ok is false when it does not
// exist (or is relative: a policy's paths are absolute by then, and a
// relative one would mean the process's directory, which nobody meant).
func existing(p string) (resolved string, info fs.FileInfo, ok bool) {
	if !filepath.IsAbs(p) {
		return "", nil, false
	}
	resolved, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", nil, false
	}
	info, err = os.Stat(resolved)
	if err != nil {
		return "", nil, false
	}
	return resolved, info, true
}

func appendNew(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}

// makeStateDir makes a missing state directory of the agent's CLI, so that
// it can be granted before the CLI first runs. Only under home: a path
// elsewhere is the user's to make. A name with an extension after its
// leading dot (.claude.json) is a file the CLI writes itself, never made
// as a directory.
func makeStateDir(p, home string) error {
	if home == "" || !filepath.IsAbs(p) || !within(filepath.Clean(p), filepath.Clean(home)) {
		return nil
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if strings.Contains(strings.TrimPrefix(filepath.Base(p), "."), ".") {
		return nil
	}
	if err := os.MkdirAll(p, 0o700); err != nil {
		return fmt.Errorf("sandbox: make the agent's state directory: %w", err)
	}
	return nil
}

// gitWritable are the paths outside a linked worktree that a commit in it
// writes: its own git directory (index, HEAD, logs), the shared object
// store, and the directories of its branch's ref and reflog. Nothing else
// of the main repository: its config and hooks would let an agent run code
// outside the sandbox through ralph's own git calls, and other refs are
// other slots' work. A branch directly under refs/heads shares that
// directory with every such branch: Landlock grants a name's creation only
// through its directory, and git writes a ref through a lock file beside
// it. Read from the files themselves, without git: this runs every
// iteration.
//
// The directories are the pinned ones when ralph made the worktree
// (Agent.GitDir). Otherwise they are read from the workspace's .git file
// and the commondir file, which an earlier iteration's agent may have
// rewritten to have any directory granted: they are granted only as git
// lays a linked worktree out (the git directory is an entry of the common
// directory's worktrees/, and names the workspace back).
func gitWritable(a Agent, makeDirs bool) ([]string, error) {
	gitDir, common, ok := a.GitDir, a.GitCommonDir, a.GitDir != "" && a.GitCommonDir != ""
	if !ok {
		gitDir, common, ok = linkedRepository(a.Workspace)
	}
	if !ok {
		return nil, nil
	}
	out := []string{gitDir, filepath.Join(common, "objects")}
	branch := headBranch(gitDir)
	if branch == "" {
		return out, nil // a detached HEAD moves no ref
	}
	for _, dir := range []string{
		filepath.Join(common, filepath.Dir(filepath.FromSlash(branch))),
		filepath.Join(common, "logs", filepath.Dir(filepath.FromSlash(branch))),
	} {
		if makeDirs {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("sandbox: make the branch's ref directory: %w", err)
			}
		}
		out = append(out, dir)
	}
	return out, nil
}

// linkedRepository is the git directory and common directory of the linked
// worktree at workspace, from its files, when they are laid out as git
// lays them out; ok is false for a main checkout (whose .git, a directory
// inside the workspace, is writable with it), no repository, or a layout
// git would not have made.
func linkedRepository(workspace string) (gitDir, common string, ok bool) {
	gitDir, ok = linkedGitDir(workspace)
	if !ok {
		return "", "", false
	}
	common = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	if filepath.Dir(gitDir) != filepath.Join(common, "worktrees") || !namesBack(gitDir, workspace) {
		return "", "", false
	}
	return gitDir, common, true
}

// namesBack reports whether the worktree entry gitDir names workspace's
// .git in its gitdir file, as git writes it.
func namesBack(gitDir, workspace string) bool {
	b, err := os.ReadFile(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return false
	}
	named, err1 := os.Stat(strings.TrimSpace(string(b)))
	own, err2 := os.Stat(filepath.Join(workspace, ".git"))
	return err1 == nil && err2 == nil && os.SameFile(named, own)
}

// linkedGitDir is the git directory of a linked worktree, from its .git
// file ("gitdir: PATH"); ok is false for a main checkout (whose .git, a
// directory inside the workspace, is writable with it) or no repository.
func linkedGitDir(workspace string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(workspace, ".git"))
	if err != nil {
		return "", false
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(workspace, dir)
	}
	return filepath.Clean(dir), true
}

// headBranch is the ref HEAD names ("refs/heads/ralph/t1"), "" when HEAD
// is detached or unreadable.
func headBranch(gitDir string) string {
	f, err := os.Open(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if !s.Scan() {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "ref:")
	ref = strings.TrimSpace(ref)
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return ""
	}
	return ref
}

// gitReadOnly are the protected parts of workspace's .git when it is a
// directory (a main checkout); a linked worktree's .git is a file, and its
// repository's config and hooks are outside the workspace already.
func gitReadOnly(workspace string) []string {
	var out []string
	for _, name := range gitProtected {
		if resolved, _, ok := existing(filepath.Join(workspace, ".git", name)); ok {
			out = append(out, resolved)
		}
	}
	return out
}
