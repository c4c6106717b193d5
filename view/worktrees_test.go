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

func TestWriteLoopWorktrees(t *testing.T) {
	n := func(i int) *int { return &i }
	at := func(name string) autopilot.LoopWorktree {
		return autopilot.LoopWorktree{Name: name, Branch: "ralph-loop/" + name, Dir: filepath.FromSlash("/repo/.worktrees/.loops/" + name)}
	}
	list := []autopilot.LoopWorktreeStatus{
		{LoopWorktree: at("a"), Base: "main", Ahead: n(2), Ended: &runfiles.Termination{Reason: runfiles.ReasonMaxIterations, ExitCode: 2}},
		{LoopWorktree: at("b"), Base: "0123456789abcdef0123456789abcdef01234567", Ahead: n(0), Unfinished: true,
			Ended: &runfiles.Termination{Reason: runfiles.ReasonInterrupted, ExitCode: 130}},
		{LoopWorktree: at("c"), Base: "old-main", NoWorktree: true},
		{LoopWorktree: at("d"), NoBranch: true, Uncommitted: 3},
		{LoopWorktree: at("e"), Running: true, PID: 7, Base: "main", Ahead: n(1)},
	}
	var out bytes.Buffer
	WriteLoopWorktrees(&out, list, filepath.FromSlash("/repo"))
	assert.Equal(t, strings.ReplaceAll(""+
		"NAME  LOOP                      BRANCH        COMMITS                   PATH\n"+
		"a     max_iterations (exit 2)   ralph-loop/a  2 commits not in main     .worktrees/.loops/a\n"+
		"b     unfinished (interrupted)  ralph-loop/b  merged into 0123456789    .worktrees/.loops/b\n"+
		"c     no worktree               ralph-loop/c  old-main is gone          .worktrees/.loops/c\n"+
		"d     no run yet                ralph-loop/d  no branch, 3 uncommitted  .worktrees/.loops/d\n"+
		"e     running (pid 7)           ralph-loop/e  1 commit not in main      .worktrees/.loops/e\n",
		".worktrees/.loops/", filepath.FromSlash(".worktrees/.loops/")), out.String())

	out.Reset()
	WriteLoopWorktrees(&out, list[:1], filepath.FromSlash("/elsewhere"))
	assert.Contains(t, out.String(), " "+list[0].Dir+"\n", "a path outside the directory the command runs in is shown whole")
}
