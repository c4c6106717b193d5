package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// AgentPIDFile holds the process group id of the running agent, so a ralph
// killed outright (SIGKILL, a crash) can be followed by one that stops the
// agent it left behind before running anything else.
const AgentPIDFile = "agent.pgid"

func (e *Engine) recordAgent(pid int) {
	if err := os.WriteFile(filepath.Join(e.dir, AgentPIDFile), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		e.opts.Reporter.Warn("cannot record the agent's pid: " + err.Error())
	}
}

func (e *Engine) forgetAgent() {
	_ = os.Remove(filepath.Join(e.dir, AgentPIDFile))
}

// stopOrphanedAgent stops the process group of an agent whose ralph died
// without cleaning up: SIGTERM, then SIGKILL after the grace period.
func (e *Engine) stopOrphanedAgent() error {
	path := filepath.Join(e.dir, AgentPIDFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", AgentPIDFile, err)
	}
	defer e.forgetAgent()
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
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
