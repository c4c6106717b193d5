package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// AgentPIDFile holds the process group id of the running agent, so a ralph
// killed outright (SIGKILL, a crash) can be followed by one that stops the
// agent it left behind before running anything else. Its first line is the
// group id, which is the agent's pid (it leads its group); its second, when
// the system tells it, the agent's start time (processStart), which tells
// the agent from a later process that got its pid. It is empty while no
// agent runs. The file is kept and rewritten in place rather than created
// and removed around every agent: a new inode per iteration is most of
// what a file system charges a tight loop.
const AgentPIDFile = "agent.pgid"

// agentRecord is what AgentPIDFile says of an agent.
type agentRecord struct {
	pgid  int
	start string // "" when unknown
}

// parseAgentRecord reads the first two lines of AgentPIDFile; what
// follows them is the remnant of a longer record that a ralph killed
// mid-rewrite left behind. pgid is 0 when there is none.
func parseAgentRecord(data []byte) agentRecord {
	lines := strings.SplitN(string(data), "\n", 3)
	pgid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return agentRecord{}
	}
	rec := agentRecord{pgid: pgid}
	if len(lines) > 1 {
		rec.start = strings.TrimSpace(lines[1])
	}
	return rec
}

func (e *Engine) recordAgent(pid int) {
	// The agent is ralph's child, not yet waited for: even one that has
	// exited already still shows its start time. The second line is
	// written, empty, when it is unknown, so that a remnant of a longer
	// record is never taken for it.
	start, _ := processStart(pid)
	text := strconv.Itoa(pid) + "\n" + start + "\n"
	if err := writeInPlace(e.dir, filepath.Join(e.dir, AgentPIDFile), text); err != nil {
		e.opts.Reporter.Warn("cannot record the agent's pid: " + err.Error())
	}
}

func (e *Engine) forgetAgent() {
	_ = ralphdir.Truncate(e.dir, filepath.Join(e.dir, AgentPIDFile))
}

// writeInPlace writes text over the start of path, a file under the .ralph
// directory root, creating it if needed, and cuts what is left of longer
// old content. A reader that catches it half-way reads the new first lines.
func writeInPlace(root, path, text string) error {
	f, err := ralphdir.OpenFile(root, path, os.O_WRONLY|os.O_CREATE, ralphdir.FileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteAt([]byte(text), 0)
	if err == nil {
		err = f.Truncate(int64(len(text)))
	}
	return errors.Join(err, f.Close())
}

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
func (e *Engine) stopOrphanedAgent(prev *RunState) error {
	path := filepath.Join(e.dir, AgentPIDFile)
	data, err := ralphdir.ReadFile(e.dir, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	if e.opts.Start == StartNew || prev == nil || prev.Terminated != nil {
		return nil // no run of this workspace was cut off: no agent of one can be left
	}
	defer e.forgetAgent()
	rec := parseAgentRecord(data)
	if rec.pgid <= 1 || rec.pgid == syscall.Getpgrp() || !groupRunning(rec.pgid) {
		return nil
	}
	ours, err := e.agentOf(rec, prev)
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
func (e *Engine) agentOf(rec agentRecord, prev *RunState) (bool, error) {
	if rec.start != "" {
		if start, err := processStart(rec.pgid); err == nil {
			if start == rec.start {
				return true, nil
			}
			e.opts.Reporter.Warn(fmt.Sprintf("%s names process group %d, but its leader started at another time than the agent ralph recorded there "+
				"(a process that got its pid since); it is left alone", AgentPIDFile, rec.pgid))
			return false, nil
		}
	}
	envs, err := groupEnvirons(rec.pgid)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		e.opts.Reporter.Warn(fmt.Sprintf("%s names process group %d, which is running; ralph cannot tell on this system whether it is the agent of run %s "+
			"that a killed ralph left behind, so it leaves it alone: if it is, stop it with `kill -TERM -%d`", AgentPIDFile, rec.pgid, prev.RunID, rec.pgid))
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look for the agent left running by run %s: %w", prev.RunID, err)
	case slices.ContainsFunc(envs, func(env []string) bool { return isAgentOf(env, e.opts.Workspace, prev.RunID) }):
		return true, nil
	}
	e.opts.Reporter.Warn(fmt.Sprintf("%s names process group %d, but no process in it is an agent of run %s in this workspace "+
		"(RALPH_WORKSPACE and RALPH_RUN_ID in its environment); it is left alone", AgentPIDFile, rec.pgid, prev.RunID))
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

// isAgentOf reports whether env, a process's environment, is that of an
// agent ralph started in workspace for run runID.
func isAgentOf(env []string, workspace, runID string) bool {
	var inWorkspace, ofRun bool
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "RALPH_RUN_ID":
			ofRun = ofRun || v == runID
		case "RALPH_WORKSPACE":
			inWorkspace = inWorkspace || sameDir(v, workspace)
		}
	}
	return inWorkspace && ofRun
}

// sameDir reports whether a and b name one directory, however each was
// spelt (a symlinked path, a trailing slash).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, errA := os.Stat(a)
	bi, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ai, bi)
}

func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// clearStaleIndexLock removes the workspace's git index.lock when nothing
// holds it open: an agent's git killed half-way (a ralph killed with its
// agent, a machine that went down) leaves it, and every commit the agent
// tries afterwards fails until someone removes it by hand.
func (e *Engine) clearStaleIndexLock(ctx context.Context) {
	path := git.Repo{Dir: e.opts.Workspace}.StaleIndexLock(ctx)
	if path == "" {
		return
	}
	if err := os.Remove(path); err != nil {
		e.opts.Reporter.Warn(fmt.Sprintf("%s was left by a git process that was killed, and could not be removed: %v", path, err))
		return
	}
	e.opts.Reporter.Warn(fmt.Sprintf("removed %s, left by a git process that was killed (nothing had it open)", path))
}
