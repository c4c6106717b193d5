package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

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

func (e *Engine) recordAgent(pid int) { e.recordAgentAt(e.files().AgentPID(), pid) }

// recordAgentAt is recordAgent into path: AgentPID, or a wave worker's.
func (e *Engine) recordAgentAt(path string, pid int) {
	// The agent is ralph's child, not yet waited for: even one that has
	// exited already still shows its start time. The second line is
	// written, empty, when it is unknown, so that a remnant of a longer
	// record is never taken for it.
	start, _ := processStart(pid)
	text := strconv.Itoa(pid) + "\n" + start + "\n"
	if err := writeInPlace(e.dir, path, text); err != nil {
		e.opts.Reporter.Warn("cannot record the agent's pid: " + err.Error())
	}
}

// agentPIDFiles are the files that may record an agent a killed ralph
// left running: AgentPID, and a wave's workers' (WaveAgentPID).
func (e *Engine) agentPIDFiles() []string {
	paths := []string{e.files().AgentPID()}
	entries, _ := os.ReadDir(e.dir)
	for _, entry := range entries {
		var n int
		if _, err := fmt.Sscanf(entry.Name(), runfiles.WaveAgentPIDPattern, &n); err == nil && entry.Name() == fmt.Sprintf(runfiles.WaveAgentPIDPattern, n) {
			paths = append(paths, filepath.Join(e.dir, entry.Name()))
		}
	}
	return paths
}

func (e *Engine) forgetAgent() {
	_ = ralphdir.Truncate(e.dir, e.files().AgentPID())
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

// findCommitLocks learns where the lock files of a commit in the
// workspace would be, once a run, and removes those that are stale.
func (e *Engine) findCommitLocks(ctx context.Context) {
	e.commitLocks = e.gitRepo().CommitLocks(ctx)
	e.clearStaleCommitLocks()
}

// clearStaleCommitLocks removes the lock files of a commit (the index's,
// HEAD's, the branch's) that nothing holds open: an agent's git killed
// half-way (a ralph killed with its agent, a machine that went down, an
// agent stopped at its time limit) leaves them, and every commit the agent
// tries afterwards fails until someone removes them by hand. It is asked
// before every agent starts, at the cost of an lstat each when there is
// no lock.
func (e *Engine) clearStaleCommitLocks() {
	for _, lock := range e.commitLocks {
		e.clearStaleLock(lock)
	}
}

func (e *Engine) clearStaleLock(lock string) {
	path := git.StaleLock(lock)
	if path == "" {
		return
	}
	if err := os.Remove(path); err != nil {
		e.opts.Reporter.Warn(fmt.Sprintf("%s was left by a git process that was killed, and could not be removed: %v", path, err))
		return
	}
	e.opts.Reporter.Warn(fmt.Sprintf("removed %s, left by a git process that was killed (nothing had it open)", path))
}
