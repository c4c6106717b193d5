package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// AgentPIDFile holds the process group id of the running agent, so a ralph
// killed outright (SIGKILL, a crash) can be followed by one that stops the
// agent it left behind before running anything else. It is empty while no
// agent runs. The file is kept and rewritten in place rather than created
// and removed around every agent: a new inode per iteration is most of
// what a file system charges a tight loop.
const AgentPIDFile = "agent.pgid"

func (e *Engine) recordAgent(pid int) {
	if err := writeInPlace(e.dir, filepath.Join(e.dir, AgentPIDFile), strconv.Itoa(pid)+"\n"); err != nil {
		e.opts.Reporter.Warn("cannot record the agent's pid: " + err.Error())
	}
}

func (e *Engine) forgetAgent() {
	_ = ralphdir.Truncate(e.dir, filepath.Join(e.dir, AgentPIDFile))
}

// writeInPlace writes text over the start of path, a file under the .ralph
// directory root, creating it if needed, and cuts what is left of longer
// old content. A reader that catches it half-way reads the new first line.
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

// stopOrphanedAgent stops the process group of an agent whose ralph died
// without cleaning up: SIGTERM, then SIGKILL after the grace period.
func (e *Engine) stopOrphanedAgent() error {
	path := filepath.Join(e.dir, AgentPIDFile)
	data, err := ralphdir.ReadFile(e.dir, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", AgentPIDFile, err)
	}
	defer e.forgetAgent()
	first, _, _ := strings.Cut(string(data), "\n")
	pgid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pgid <= 1 || !groupAlive(pgid) {
		return nil
	}
	e.opts.Reporter.Warn(fmt.Sprintf("stopping agent process group %d, left running by a ralph that did not exit cleanly", pgid))
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(e.opts.KillGrace)
	for groupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if groupAlive(pgid) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return nil
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
