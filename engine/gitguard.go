package engine

import (
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/runfiles"
)

// A confined agent writes its workspace, and in a main checkout that holds
// .git: Landlock grants .git/config and .git/hooks with the rest of the
// tree, and under bubblewrap the agent can still put .git aside for one of
// its own or add a commondir. Whatever git reads there decides what git
// runs (core.fsmonitor, a filter, a hook), and ralph's own git is not
// confined: the snapshot after the iteration would run the agent's code
// with ralph's rights. A criterion's command, confined as the agent is,
// can do the same.
//
// So around every confined run (an agent, or a check's commands) the engine
// reads the repository's controls (git.Controls) before and after; a
// change ends the run as fatal (CauseGitArmed) before ralph runs git there
// again, naming what changed. A run with no sandbox is left as it was: its
// agent could run anything itself.

// gitWatch is the repository's controls as a confined run found them; nil
// when the run is not confined, and watches nothing.
type gitWatch struct {
	repo   git.Repo
	before git.Controls
}

// watchGit reads the controls before a confined run.
func (e *Engine) watchGit(confined bool) *gitWatch {
	if !confined {
		return nil
	}
	repo := e.gitRepo()
	return &gitWatch{repo: repo, before: repo.Controls()}
}

// changed lists what changed since the watch began.
func (w *gitWatch) changed() []string {
	if w == nil {
		return nil
	}
	return w.before.Changed(w.repo.Controls())
}

// gitRepo is the workspace's repository as ralph's git reaches it.
func (e *Engine) gitRepo() git.Repo {
	return git.Repo{Dir: e.opts.Workspace, Pin: e.opts.GitPin}
}

// confined reports whether hat's agent runs in a sandbox.
func (e *Engine) confined(hat string) bool {
	s := sandboxOf(e.backendFor(hat))
	return s != "" && s != "off"
}

// armed ends the run once what decides what git runs in the workspace
// changed under a confined run (by says whose): no git runs there from
// now on, in this process.
func (e *Engine) armed(by string, changed []string) {
	if e.gitArmed != nil {
		return
	}
	e.gitArmed = &GitArmedError{By: by, Changed: e.relative(changed)}
	e.ending = e.terminateBy(runfiles.ReasonFatal, runfiles.CauseGitArmed, e.gitArmed.Error())
	e.fatal = e.gitArmed
}

// relative writes paths inside the workspace relative to it, as people
// know them (.git/config).
func (e *Engine) relative(paths []string) []string {
	out := make([]string, len(paths))
	ws, err := filepath.Abs(e.opts.Workspace)
	for i, p := range paths {
		out[i] = p
		if rel, relErr := filepath.Rel(ws, p); err == nil && relErr == nil && !strings.HasPrefix(rel, "..") {
			out[i] = rel
		}
	}
	return out
}

// checkSandbox is the confinement of the checks run on hat's work ("" for
// the loop's own, the baseline), with the guard that stops git from
// running once a confined command armed the repository; a nil Sandbox
// when they run unconfined.
func (e *Engine) checkSandbox(hat string) (criteria.Sandbox, *gitWatch) {
	if e.opts.CheckSandbox == nil {
		return nil, nil
	}
	sb := e.opts.CheckSandbox(hat)
	if sb == nil {
		return nil, nil
	}
	return sb, e.watchGit(true)
}

// beforeGit is criteria.Env.BeforeGit for checks that w watches: a check
// that would run git after a confined command armed the repository fails
// instead, and the run ends.
func (e *Engine) beforeGit(w *gitWatch, by string) func() error {
	if w == nil {
		return e.gitAllowed
	}
	return func() error {
		if changed := w.changed(); len(changed) > 0 {
			e.armed(by, changed)
		}
		return e.gitAllowed()
	}
}

// gitAllowed says whether ralph may still run git in the workspace.
func (e *Engine) gitAllowed() error {
	if e.gitArmed != nil {
		return e.gitArmed
	}
	return nil
}
