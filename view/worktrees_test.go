package view

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestWriteWorktrees: a line for each worktree, a loop's or a task's,
// with how its loop is and what it holds that its base does not.
func TestWriteWorktrees(t *testing.T) {
	n := func(i int) *int { return &i }
	at := func(name string) autopilot.LoopWorktree {
		return autopilot.LoopWorktree{Name: name, Branch: "ralph-loop/" + name, Dir: filepath.FromSlash("/repo/.worktrees/.loops/" + name)}
	}
	loop := func(st autopilot.LoopWorktreeStatus) autopilot.WorktreeStatus {
		return autopilot.WorktreeStatus{Kind: autopilot.WorktreeLoop, LoopWorktreeStatus: st}
	}
	task := func(id string, st autopilot.LoopWorktreeStatus, inProgress, failed bool) autopilot.WorktreeStatus {
		st.Name, st.Branch = id, "ralph/"+id
		if !st.NoWorktree {
			st.Dir = filepath.FromSlash("/repo/.worktrees/" + id)
		}
		return autopilot.WorktreeStatus{Kind: autopilot.WorktreeTask, LoopWorktreeStatus: st, InProgress: inProgress, Failed: failed}
	}
	list := []autopilot.WorktreeStatus{
		loop(autopilot.LoopWorktreeStatus{LoopWorktree: at("a"), Base: "main", Ahead: n(2), Ended: &runfiles.Termination{Reason: runfiles.ReasonMaxIterations, ExitCode: 2}}),
		loop(autopilot.LoopWorktreeStatus{LoopWorktree: at("b"), Base: "0123456789abcdef0123456789abcdef01234567", Ahead: n(0), Unfinished: true,
			Ended: &runfiles.Termination{Reason: runfiles.ReasonInterrupted, ExitCode: 130}}),
		loop(autopilot.LoopWorktreeStatus{LoopWorktree: at("c"), Base: "old-main", NoWorktree: true}),
		loop(autopilot.LoopWorktreeStatus{LoopWorktree: at("d"), NoBranch: true, Uncommitted: 3}),
		loop(autopilot.LoopWorktreeStatus{LoopWorktree: at("e"), Running: true, PID: 7, Base: "main", Ahead: n(1)}),
		task("T-1", autopilot.LoopWorktreeStatus{Running: true, PID: 8, Base: "main", Ahead: n(1)}, true, false),
		task("T-2", autopilot.LoopWorktreeStatus{Base: "main", Ahead: n(3), Uncommitted: 1,
			Ended: &runfiles.Termination{Reason: runfiles.ReasonMaxIterations, ExitCode: 2}}, false, true),
		task("T-3", autopilot.LoopWorktreeStatus{Base: "main", Ahead: n(0), NoWorktree: true}, false, false),
	}
	var out bytes.Buffer
	WriteWorktrees(&out, list, filepath.FromSlash("/repo"))
	assert.Equal(t, strings.ReplaceAll(""+
		"KIND  NAME  LOOP                                  BRANCH        NOT MERGED                            PATH\n"+
		"loop  a     max_iterations (exit 2)               ralph-loop/a  2 commits not in main                 .worktrees/.loops/a\n"+
		"loop  b     unfinished (interrupted)              ralph-loop/b  merged into 0123456789                .worktrees/.loops/b\n"+
		"loop  c     no worktree                           ralph-loop/c  old-main is gone                      .worktrees/.loops/c\n"+
		"loop  d     no run yet                            ralph-loop/d  no branch, 3 uncommitted              .worktrees/.loops/d\n"+
		"loop  e     running (pid 7)                       ralph-loop/e  1 commit not in main                  .worktrees/.loops/e\n"+
		"task  T-1   running (pid 8)                       ralph/T-1     1 commit not in main                  .worktrees/T-1\n"+
		"task  T-2   max_iterations (exit 2), task failed  ralph/T-2     3 commits not in main, 1 uncommitted  .worktrees/T-2\n"+
		"task  T-3   no worktree                           ralph/T-3     merged into main                      -\n",
		".worktrees/", filepath.FromSlash(".worktrees/")), out.String())

	out.Reset()
	WriteWorktrees(&out, list[:1], filepath.FromSlash("/elsewhere"))
	assert.Contains(t, out.String(), " "+list[0].Dir+"\n", "a path outside the directory the command runs in is shown whole")
}
