// Package git is ralph's one way into a workspace's git repository: its
// HEAD, the commits since a base, what is uncommitted, and a fingerprint of
// everything git sees, always leaving ralph's own .ralph/ out. Criteria,
// the engine's adapter and the autopilot use it.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// Repo reads the git repository of a workspace. Its methods treat a
// directory that is not inside a repository as one with nothing to report
// (no commits, no changes) rather than as an error; a missing directory or
// a broken git is an error.
type Repo struct {
	Dir string
	// Pin, when set, is where the repository is: git is told, and never
	// reads Dir's .git to find it. Dir is then the work tree's top.
	Pin Pin
}

// Commit is one commit.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// StateDir is ralph's own directory in the workspace. Status and diffs
// leave it out: ralph writes its event log there every iteration, which
// would otherwise make every workspace dirty and every iteration look like
// progress.
const StateDir = ralphdir.Name

// scope limits status and diffs to the workspace, without StateDir.
func scope() []string { return []string{"--", ".", ":(exclude)" + StateDir} }

// gitWaitDelay bounds the wait for git's output once git exits or its
// context ends (a hook or credential helper could hold the pipes).
const gitWaitDelay = time.Second

// Head is the commit HEAD points to; "" when there is no commit yet or Dir
// is not in a repository.
func (g Repo) Head(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	var ge *gitError
	switch {
	case err == nil:
		return strings.TrimSpace(string(out)), nil
	case errors.As(err, &ge) && (ge.exitCode == 1 || ge.notRepo()):
		// --verify --quiet exits 1, silently, for an unborn HEAD.
		return "", nil
	}
	return "", err
}

// IsRepo reports whether Dir is inside a git work tree.
func (g Repo) IsRepo(ctx context.Context) (bool, error) {
	_, err := g.run(ctx, "rev-parse", "--git-dir")
	if err == nil {
		return true, nil
	}
	if isNotRepo(err) {
		return false, nil
	}
	return false, err
}

// CommitsBetween lists the commits reachable from head and not from base,
// oldest first; with base "", every commit reachable from head. No head
// (no commit yet, or not a repository), or head at base: nil.
func (g Repo) CommitsBetween(ctx context.Context, base, head string) ([]Commit, error) {
	if head == "" || head == base {
		return nil, nil
	}
	rng := head
	if base != "" {
		rng = base + ".." + head
	}
	return g.log(ctx, rng, 0)
}

// CountSince is how many commits there are between base and HEAD, without listing
// them (a repository's whole history can be long).
func (g Repo) CountSince(ctx context.Context, base string) (int, error) {
	head, err := g.Head(ctx)
	if err != nil || head == "" {
		return 0, err
	}
	out, err := g.run(ctx, "rev-list", "--count", revRange(base), "--")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("git rev-list --count: %w", err)
	}
	return n, nil
}

func revRange(base string) string {
	if base == "" {
		return "HEAD"
	}
	return base + "..HEAD"
}

// Log lists the commits between base and HEAD, oldest first; limit >
// 0 keeps only the newest limit of them.
func (g Repo) Log(ctx context.Context, base string, limit int) ([]Commit, error) {
	return g.log(ctx, revRange(base), limit)
}

func (g Repo) log(ctx context.Context, rng string, limit int) ([]Commit, error) {
	args := []string{"log", "--reverse", "--format=%H %s"}
	if limit > 0 {
		args = append(args, "-n", strconv.Itoa(limit))
	}
	out, err := g.run(ctx, append(args, rng, "--")...)
	if err != nil {
		return nil, err
	}
	var commits []Commit
	for line := range strings.Lines(string(out)) {
		hash, subject, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		commits = append(commits, Commit{Hash: hash, Subject: subject})
	}
	return commits, nil
}

// section writes a labelled, length-prefixed part, so that parts cannot
// run into each other and collide.
func section(h hash.Hash, label string, data []byte) {
	fmt.Fprintf(h, "%s %d\n", label, len(data))
	h.Write(data)
}

// Dirty lists the uncommitted changes `git status --porcelain` shows,
// without .ralph/.
func (g Repo) Dirty(ctx context.Context) ([]string, error) {
	out, err := g.run(ctx, append([]string{"status", "--porcelain"}, scope()...)...)
	if err != nil {
		return nil, err
	}
	var lines []string
	for line := range strings.Lines(string(out)) {
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	return lines, nil
}

// run runs one git command in Dir and returns its stdout. The
// configuration keeps output stable whatever the user's settings are.
func (g Repo) run(ctx context.Context, args ...string) ([]byte, error) {
	return g.runEnv(ctx, nil, args...)
}

// runEnv is run with env added to git's environment.
func (g Repo) runEnv(ctx context.Context, env []string, args ...string) ([]byte, error) {
	full := append([]string{"-C", g.Dir,
		"-c", "core.quotepath=off", "-c", "log.showSignature=false", "-c", "color.ui=false"}, args...)
	if len(args) > 0 && args[0] == "worktree" {
		defer lockWorktrees(g.Dir)()
	}
	pinned, err := g.pinEnv()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", subcommand(args), err)
	}
	var stdout, stderr bytes.Buffer
	// A Ctrl-C meant for ralph must not kill git half-way through a merge
	// or a commit: ralph stops it through ctx when it means to.
	err = procgroup.RunDetached(func() *exec.Cmd {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, "git", full...)
		cmd.Env = append(append(gitEnv(), pinned...), env...)
		cmd.WaitDelay = gitWaitDelay
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd
	})
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", subcommand(args), context.Cause(ctx))
	}
	ge := &gitError{sub: subcommand(args), err: err, stderr: strings.TrimSpace(stderr.String()), stdout: stdout.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ge.exitCode = ee.ExitCode()
	}
	return nil, ge
}

// worktreeLocks holds a mutex per repository directory: git's worktree
// commands in one repository must not overlap, as a prune beside an add
// removes the worktree being added ("could not open .../locked"), and the
// autopilot adds and removes worktrees from two goroutines (its slots and
// its merge queue).
var worktreeLocks sync.Map

// lockWorktrees takes dir's worktree lock and returns its release.
func lockWorktrees(dir string) func() {
	mu, _ := worktreeLocks.LoadOrStore(filepath.Clean(dir), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// subcommand is the git command args run, past the -c settings before it.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return "git"
}

// gitEnv is ralph's environment for git: without the variables that would
// point git at another repository than Dir's (set when ralph itself runs
// from a git hook), with no optional locks (reading must not block a
// commit the agent makes at the same moment) and with messages in English
// (notRepo reads them).
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		key, _, _ := strings.Cut(kv, "=")
		switch key {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
}

// gitError is a git command that exited unsuccessfully.
type gitError struct {
	sub      string // the subcommand, e.g. "status"
	exitCode int
	stderr   string
	// stdout is what it printed, for commands whose failure is a report
	// (git diff --check).
	stdout []byte
	err    error
}

func (e *gitError) Error() string {
	if e.stderr == "" {
		return fmt.Sprintf("git %s: %v", e.sub, e.err)
	}
	return fmt.Sprintf("git %s: %v: %s", e.sub, e.err, e.stderr)
}

func (e *gitError) Unwrap() error { return e.err }

// notRepo recognises git's refusal to work outside a repository (exit 128
// and its message; LC_ALL=C keeps that in English). Other exit-128 errors,
// such as a repository owned by another user, stay errors.
func (e *gitError) notRepo() bool {
	return e.exitCode == 128 && strings.Contains(e.stderr, "not a git repository")
}

func isNotRepo(err error) bool {
	var ge *gitError
	return errors.As(err, &ge) && ge.notRepo()
}
