package engine

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// stopOrphanedAgent has nothing to stop on Windows: an agent runs in a
// job object that kills everything in it once its last handle closes,
// and ralph holds the only one, which Windows closes when ralph exits,
// however it exits. So a killed ralph leaves no agent running, and the
// record it left is only forgotten, when the run is resumed as on Unix.
func (e *Engine) stopOrphanedAgent(prev *runfiles.RunState) error {
	path := e.files().AgentPID()
	_, err := ralphdir.ReadFile(e.dir, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	if e.opts.Start != runfiles.StartNew && prev != nil && prev.Terminated == nil {
		e.forgetAgent()
	}
	return nil
}
