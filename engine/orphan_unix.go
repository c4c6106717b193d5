//go:build unix

package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// stopOrphanedAgent stops the process group of an agent that the ralph
// of prev, the run being resumed (or set aside by --fresh), left running
// when it was killed: SIGTERM, then SIGKILL after the grace period.
//
// agent.pgid is a file in the workspace, and a repository can bring one
// naming any process group of the user's. So nothing is stopped on a new
// run, nor for a run that ended, and a group is stopped only when it is
// shown to be the agent ralph started for prev in this workspace
// (agentOf). A group that is not is left alone, and that is said; so is
// one the system cannot show to be.
//
// A wave's workers are recorded each in a file of its own
// (runfiles.Dir.WaveAgentPID); each is stopped the same way.
func (e *Engine) stopOrphanedAgent(prev *runfiles.RunState) error {
	for _, path := range e.agentPIDFiles() {
		if err := e.stopOrphanAt(path, prev); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) stopOrphanAt(path string, prev *runfiles.RunState) error {
	data, err := ralphdir.ReadFile(e.dir, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	if e.opts.Start == runfiles.StartNew || prev == nil || prev.Terminated != nil {
		return nil // no run of this workspace was cut off: no agent of one can be left
	}
	defer func() { _ = ralphdir.Truncate(e.dir, path) }()
	rec := parseAgentRecord(data)
	if rec.pgid <= 1 || rec.pgid == syscall.Getpgrp() || !groupRunning(rec.pgid) {
		return nil
	}
	ours, err := e.agentOf(filepath.Base(path), rec, prev)
	if err != nil {
		return err
	}
	if !ours {
		return nil
	}
	e.opts.Reporter.Warn(fmt.Sprintf("stopping agent process group %d, left running by a ralph that did not exit cleanly", rec.pgid))
	_ = syscall.Kill(-rec.pgid, syscall.SIGTERM)
	deadline := time.Now().Add(e.opts.KillGrace)
	for groupRunning(rec.pgid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if groupRunning(rec.pgid) {
		_ = syscall.Kill(-rec.pgid, syscall.SIGKILL)
	}
	return nil
}

// agentOf reports whether the running group rec names is the agent that
// ralph started for prev in this workspace, and warns when it cannot be
// shown to be. Either shows it:
//   - its leader is the process ralph recorded: the same pid with the same
//     start time (a pid is reused only once its group is gone);
//   - one of its processes has the run's RALPH_WORKSPACE and RALPH_RUN_ID
//     (agentEnv) in its environment, as an agent whose leader has exited
//     (it dies with ralph on Linux) leaves its children. Only Linux shows
//     another process's environment (/proc).
func (e *Engine) agentOf(name string, rec agentRecord, prev *runfiles.RunState) (bool, error) {
	if rec.start != "" {
		if start, err := processStart(rec.pgid); err == nil {
			if start == rec.start {
				return true, nil
			}
			e.opts.Reporter.Warn(fmt.Sprintf("%s names process group %d, but its leader started at another time than the agent ralph recorded there "+
				"(a process that got its pid since); it is left alone", name, rec.pgid))
			return false, nil
		}
	}
	envs, err := groupEnvirons(rec.pgid)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		e.opts.Reporter.Warn(fmt.Sprintf("%s names process group %d, which is running; ralph cannot tell on this system whether it is the agent of run %s "+
			"that a killed ralph left behind, so it leaves it alone: if it is, stop it with `kill -TERM -%d`", name, rec.pgid, prev.RunID, rec.pgid))
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look for the agent left running by run %s: %w", prev.RunID, err)
	case slices.ContainsFunc(envs, func(env []string) bool { return isAgentOf(env, e.opts.Workspace, prev.RunID) }):
		return true, nil
	}
	e.opts.Reporter.Warn(fmt.Sprintf("%s names process group %d, but no process in it is an agent of run %s in this workspace "+
		"(RALPH_WORKSPACE and RALPH_RUN_ID in its environment); it is left alone", name, rec.pgid, prev.RunID))
	return false, nil
}

// groupRunning reports whether a process of group pgid has not exited:
// one that has, and waits for its parent to reap it (a zombie), is
// stopped by no signal, and a group of only those is gone.
func groupRunning(pgid int) bool {
	envs, err := groupEnvirons(pgid)
	if err != nil {
		return groupAlive(pgid)
	}
	return len(envs) > 0
}

func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
