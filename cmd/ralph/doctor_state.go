package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	gitrepo "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// tempGrace is how old a temporary file under .ralph/ must be to be a
// leftover: a write takes milliseconds, so one this old is no running
// ralph's work in progress.
const tempGrace = 10 * time.Minute

// stateChecker looks for what a killed ralph, or a task or loop done with,
// left behind in a workspace and its repository, and with fix set does
// the fixes that lose nothing of anyone's.
type stateChecker struct {
	ws      string
	configs []string
	fix     bool
	now     time.Time
	rep     view.StateReport
}

func checkState(ctx context.Context, ws string, configs []string, fix bool) view.StateReport {
	c := &stateChecker{ws: ws, configs: configs, fix: fix, now: time.Now(), rep: view.StateReport{Fixing: fix, Findings: []view.StateFinding{}}}
	c.locks()
	c.unfinishedRun()
	c.leftAgent()
	c.temps()
	c.chainSteps()
	c.worktrees(ctx)
	return c.rep
}

// add records a finding; a safe one is fixed by fixIt when --fix was given.
func (c *stateChecker) add(f view.StateFinding, fixIt func() error) {
	if f.Safe && c.fix && fixIt != nil {
		if err := fixIt(); err != nil {
			f.FixError = err.Error()
		} else {
			f.Fixed = true
		}
	}
	c.rep.Findings = append(c.rep.Findings, f)
}

func (c *stateChecker) rel(path string) string { return relTo(c.ws, path) }

// locks finds lock files that name a holder that let go without saying
// so: a loop's or an autopilot's killed outright.
func (c *stateChecker) locks() {
	d := runfiles.In(c.ws)
	for _, path := range []string{d.Lock(), d.AutopilotLock()} {
		c.staleLock(path)
	}
}

// staleLock finds whether the lock file at path names a holder that let
// go without saying so.
func (c *stateChecker) staleLock(path string) {
	info, stale := runfiles.StaleLock(path)
	if !stale {
		return
	}
	what := fmt.Sprintf("%s names pid %d (run %s, since %s) as its holder, but no process holds it: a ralph that was killed",
		c.rel(path), info.PID, info.RunID, info.StartedAt.Local().Format("2006-01-02 15:04"))
	c.add(view.StateFinding{Kind: view.FindingStaleLock, What: what, Path: c.rel(path), Safe: true,
		Fix: "empty the lock of its holder, as a ralph does on its way out (the next ralph would take it over too)"},
		func() error {
			cleared, err := runfiles.ClearStaleLock(path)
			if err == nil && !cleared {
				return fmt.Errorf("a ralph took the lock meanwhile; it is its own now")
			}
			return err
		})
}

// unfinishedRun finds a current run that was cut off (no loop.terminate)
// and that no loop runs.
func (c *stateChecker) unfinishedRun() {
	runs, err := runfiles.Runs(c.ws)
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "the runs: "+err.Error())
		return
	}
	for _, r := range runs {
		if r.Chain != "" {
			c.unfinishedStep(r)
			continue
		}
		if r.Current && r.Ended == "unfinished" {
			c.add(view.StateFinding{Kind: view.FindingUnfinishedRun, Path: r.Log,
				What: fmt.Sprintf("run %s was cut off (ralph was killed, or the machine went down) and nothing runs it", r.RunID),
				Fix:  "`ralph loop --resume` goes on with it; `ralph loop --fresh` starts anew and keeps it under .ralph/runs/"}, nil)
		}
	}
}

// leftAgent finds the process groups of agents that a killed ralph left
// running: agent.pgid, or a wave worker's agent-wave-NN.pgid, names one
// while no loop holds the workspace. Stopping one is left to the resume,
// which first makes sure it is the run's agent (the file is the
// repository's to write, and may name any group of the user's).
func (c *stateChecker) leftAgent() {
	d := runfiles.In(c.ws)
	if held, _ := runfiles.LockHeld(d.Lock()); held {
		return
	}
	for _, left := range runfiles.LeftAgents(c.ws) {
		if !groupAlive(left.PGID) {
			continue
		}
		name, whose := filepath.Base(left.Path), "an agent's"
		if name != runfiles.AgentPIDFile {
			whose = "a wave worker's"
		}
		c.add(view.StateFinding{Kind: view.FindingAgentLeft, Path: c.rel(left.Path),
			What: fmt.Sprintf("process group %d, %s (%s), still runs while no ralph runs here: a ralph that was killed left it", left.PGID, whose, name),
			Fix:  fmt.Sprintf("`ralph loop --resume` stops it first, once it has made sure it is the run's agent; or stop it yourself: `kill -TERM -%d`", left.PGID)}, nil)
	}
}

// temps finds the temporary files of atomic writes that were cut off.
func (c *stateChecker) temps() {
	temps, err := runfiles.TempLeftovers(c.ws, c.now.Add(-tempGrace))
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "leftover temporary files: "+err.Error())
		return
	}
	for _, t := range temps {
		c.add(view.StateFinding{Kind: view.FindingTempFile, Path: t.Path, Safe: true,
			What: fmt.Sprintf("%s is the temporary file of a write that was cut off (%s, last changed %s)", t.Path, view.SizeText(t.Bytes), t.Modified.Local().Format("2006-01-02 15:04")),
			Fix:  "remove it: the file it was to replace was never touched"},
			func() error { return runfiles.RemoveTempLeftover(c.ws, t) })
	}
}

// worktrees finds the worktrees and branches ralph made that nothing has
// a use for, in the repository the workspace is in.
func (c *stateChecker) worktrees(ctx context.Context) {
	root, worktreesDir, err := loopWorktreesOf(ctx, c.ws, c.configs)
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "worktrees: "+strings.SplitN(err.Error(), "\n", 2)[0])
		return
	}
	c.prunable(ctx, root)
	c.taskWorktrees(ctx, root)
	c.loopWorktrees(ctx, root, worktreesDir)
	c.spares(ctx, root, worktreesDir)
}

// spares finds the spares a killed autopilot run left, once no autopilot
// runs to take them. They hold nothing (each was reset to the base), so
// --fix removes them as ralph worktree clean does.
func (c *stateChecker) spares(ctx context.Context, root, worktreesDir string) {
	spares := autopilot.SpareWorktrees(root, worktreesDir)
	if len(spares) == 0 {
		return
	}
	if held, _ := runfiles.LockHeld(runfiles.In(root).AutopilotLock()); held {
		return
	}
	dir := filepath.Dir(spares[0].Dir)
	c.add(view.StateFinding{Kind: view.FindingSpareWorktree, Path: c.rel(dir), Safe: true,
		What: fmt.Sprintf("%s in %s, which an autopilot run kept for its next tasks and left when it was killed; no autopilot runs to take them",
			plural.Count(len(spares), "spare worktree", "spare worktrees"), c.rel(dir)),
		Fix: "`ralph worktree clean` removes them, with git's registration of them; they hold nothing (each was reset to the base)"},
		func() error {
			_, kept, err := autopilot.CleanSpares(ctx, root, worktreesDir, c.now)
			if err == nil && len(kept) > 0 {
				return fmt.Errorf("kept: %s", kept[0].Why)
			}
			return err
		})
}

func (c *stateChecker) prunable(ctx context.Context, root string) {
	repo := gitrepo.Repo{Dir: root}
	trees, err := repo.Worktrees(ctx)
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "worktrees: "+err.Error())
		return
	}
	for _, t := range trees {
		if t.Prunable == "" {
			continue
		}
		c.add(view.StateFinding{Kind: view.FindingPrunable, Path: c.rel(t.Path), Safe: true,
			What: fmt.Sprintf("git keeps worktree %s (branch %s), whose directory is gone", c.rel(t.Path), t.Branch),
			Fix:  "`git worktree prune`: git forgets it; its branch stays"},
			func() error { return repo.PruneWorktrees(ctx) })
	}
}

func (c *stateChecker) taskWorktrees(ctx context.Context, root string) {
	list, err := autopilot.TaskWorktrees(ctx, root)
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "the autopilot's worktrees: "+err.Error())
		return
	}
	for _, st := range list {
		if st.InProgress || st.Failed || st.Prunable != "" {
			continue
		}
		holds := "nothing that " + st.Base + " does not have"
		remove, del := "git worktree remove", "git branch -d"
		if st.Unmerged() {
			holds = unmergedText(st)
			remove, del = "git worktree remove --force", "git branch -D"
		}
		if st.Dir == "" {
			c.add(view.StateFinding{Kind: view.FindingOrphanBranch, Path: st.Branch,
				What: fmt.Sprintf("branch %s has no worktree, and the autopilot has no task %s in progress; it holds %s", st.Branch, st.Task, holds),
				Fix:  fmt.Sprintf("if task %s is done with: `%s %s`", st.Task, del, st.Branch)}, nil)
			continue
		}
		c.add(view.StateFinding{Kind: view.FindingOrphanWorktree, Path: c.rel(st.Dir),
			What: fmt.Sprintf("worktree %s (branch %s) is a task's, and the autopilot has no task %s in progress; it holds %s", c.rel(st.Dir), st.Branch, st.Task, holds),
			Fix:  fmt.Sprintf("if task %s is done with: `%s %s && %s %s`; else the autopilot goes on from it when it takes the task again", st.Task, remove, c.rel(st.Dir), del, st.Branch)}, nil)
	}
}

// unmergedText says what a task's branch and worktree hold that their base
// does not.
func unmergedText(st autopilot.TaskWorktreeStatus) string {
	s := "commits that cannot be compared with " + st.Base
	if st.Ahead != nil {
		s = fmt.Sprintf("%s not in %s", plural.Count(*st.Ahead, "commit", "commits"), st.Base)
	}
	if st.Uncommitted > 0 {
		s += fmt.Sprintf(" and %s", plural.Count(st.Uncommitted, "uncommitted change", "uncommitted changes"))
	}
	return s
}

func (c *stateChecker) loopWorktrees(ctx context.Context, root, worktreesDir string) {
	list, err := autopilot.LoopWorktrees(ctx, root, worktreesDir, c.now)
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "the loops' worktrees: "+err.Error())
		return
	}
	for _, st := range list {
		if st.Running || st.Unfinished || st.Ended == nil {
			continue
		}
		c.add(view.StateFinding{Kind: view.FindingLoopWorktreeEnd, Path: c.rel(st.Dir),
			What: fmt.Sprintf("worktree %s of loop %s, whose run ended (%s)", c.rel(st.Dir), st.Name, st.Ended.Reason),
			Fix:  fmt.Sprintf("`ralph worktrees clean %s` removes it if its work is merged; `ralph worktrees clean --force %s` whatever it holds", st.Name, st.Name)}, nil)
	}
}

// relTo is path relative to dir when it is inside it.
func relTo(dir, path string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(abs, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}
