package criteria

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/plural"
)

// evidenceListMax bounds the files or commits evidence lists one by one.
const evidenceListMax = 20

const notRepoEvidence = "the workspace is not a git repository; run git init there, or drop this criterion"

func (c checker) gitClean(ctx context.Context) outcome {
	g, o, ok := c.repo()
	if !ok {
		return o
	}
	if o, ok := requireRepo(ctx, g); !ok {
		return o
	}
	lines, err := g.Dirty(ctx)
	if err != nil {
		return failed(err.Error())
	}
	if len(lines) == 0 {
		return passed("no uncommitted changes (ralph's own " + git.StateDir + "/ is not counted)")
	}
	return failed(fmt.Sprintf("%d uncommitted %s (git status --porcelain):\n%s\n"+
		"commit them, or add generated files to .gitignore", len(lines), plural.Word(len(lines), "change", "changes"), listCapped(lines)))
}

func (c checker) commitMade(ctx context.Context) outcome {
	g, o, ok := c.repo()
	if !ok {
		return o
	}
	if o, ok := requireRepo(ctx, g); !ok {
		return o
	}
	base := c.env.RunStartCommit
	n, err := g.CountSince(ctx, base)
	if err != nil {
		return failed(fmt.Sprintf("count the commits since %s: %v", since(base), err))
	}
	if n == 0 {
		return failed(fmt.Sprintf("no commit since %s; commit the work with git commit", since(base)))
	}
	commits, err := g.Log(ctx, base, evidenceListMax)
	if err != nil {
		return failed(fmt.Sprintf("list the commits since %s: %v", since(base), err))
	}
	lines := make([]string, len(commits))
	for i, cm := range commits {
		lines[i] = shortHash(cm.Hash) + " " + cm.Subject
	}
	if n > len(commits) {
		lines = append([]string{fmt.Sprintf("… %d earlier", n-len(commits))}, lines...)
	}
	return passed(fmt.Sprintf("%s since %s:\n%s", plural.Count(n, "commit", "commits"), since(base), strings.Join(lines, "\n")))
}

// repo is the workspace's repository as ralph's git reaches it, unless git
// must not run there now (Env.BeforeGit), which fails the check.
func (c checker) repo() (git.Repo, outcome, bool) {
	if c.env.BeforeGit != nil {
		if err := c.env.BeforeGit(); err != nil {
			return git.Repo{}, failed("not checked: " + err.Error()), false
		}
	}
	return git.Repo{Dir: c.ws, Pin: c.env.Git}, outcome{}, true
}

// requireRepo fails the check when the workspace is not a repository.
func requireRepo(ctx context.Context, g git.Repo) (outcome, bool) {
	ok, err := g.IsRepo(ctx)
	switch {
	case err != nil:
		return failed(err.Error()), false
	case !ok:
		return failed(notRepoEvidence), false
	}
	return outcome{}, true
}

func since(base string) string {
	if base == "" {
		return "the run started (the repository had no commit then)"
	}
	return "the run started at " + shortHash(base)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// listCapped joins lines, keeping the first evidenceListMax of them.
func listCapped(lines []string) string {
	if len(lines) <= evidenceListMax {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:evidenceListMax], "\n") + fmt.Sprintf("\n… and %d more", len(lines)-evidenceListMax)
}
