package api

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// Kind says what runs in a workspace.
type Kind string

const (
	KindNone      Kind = "none"      // nothing has run here
	KindLoop      Kind = "loop"      // a lone loop (`ralph loop`)
	KindAutopilot Kind = "autopilot" // an autopilot and its slots
)

// Status is what runs in a workspace: the loop as `ralph status --json`
// says it, or the autopilot as `ralph autopilot status --json` does.
type Status struct {
	Kind      Kind                      `json:"kind"`
	Loop      *runfiles.Status          `json:"loop,omitempty"`
	Autopilot *runfiles.AutopilotStatus `json:"autopilot,omitempty"`
}

// ReadStatus reads what runs in dir: its autopilot when one runs there or
// started after the workspace's own loop, else its loop. recent bounds a
// loop's recent events, in which r's secret values are hidden.
func ReadStatus(ctx context.Context, dir string, recent int, now time.Time, r *redact.Redactor) (Status, error) {
	if view.ShowsAutopilot(dir) {
		s, err := AutopilotStatus(ctx, dir, nil, now)
		if err != nil {
			return Status{}, err
		}
		return Status{Kind: KindAutopilot, Autopilot: &s}, nil
	}
	if _, err := runfiles.CurrentLogIn(loopDir(dir)); errors.Is(err, runfiles.ErrNoLog) {
		return Status{Kind: KindNone}, nil
	}
	s, err := LoopStatus(dir, recent, now, r)
	if err != nil {
		return Status{}, err
	}
	return Status{Kind: KindLoop, Loop: &s}, nil
}

// LoopStatus is `ralph status --json`: the loop's lock and checkpoint, and
// how its last run ended with what to do next. Its recent events are read
// from the log, so r's secret values are hidden in them.
func LoopStatus(dir string, recent int, now time.Time, r *redact.Redactor) (runfiles.Status, error) {
	files := runfiles.In(dir)
	place, step, inChain := view.ChainHere(dir)
	if inChain {
		files = step
	}
	s, err := runfiles.ReadStatusIn(files, recent, now)
	s.Chain = place
	for i := range s.Recent {
		s.Recent[i] = view.RedactEvent(r, s.Recent[i])
	}
	if _, ok := errors.AsType[*runfiles.CorruptStateError](err); ok {
		return s, &hint.Error{Err: err, Fix: corruptStateHint(files, inChain)}
	}
	if err == nil && s.Ended != nil {
		ended := *s.Ended
		ended.Message = view.EndMessage(ended)
		s.Ended = &ended
	}
	if err == nil && s.Unfinished {
		s.Hint = view.ResumeHint(s.Mode)
		if s.Chain != nil {
			s.Hint = view.ResumeHint(runfiles.ModeChainStep)
		}
	}
	return s, err
}

// loopDir is where the loop that runs in the workspace dir keeps its
// files: its .ralph/, or the current step's directory of the chain that
// runs there (view.ChainHere).
func loopDir(dir string) runfiles.Dir {
	if _, step, ok := view.ChainHere(dir); ok {
		return step
	}
	return runfiles.In(dir)
}

// AutopilotStatus is `ralph autopilot status --json`: the autopilot's
// state and slots, with the pending tasks counted in the source configs
// (nil: ./ralph.yml) name.
func AutopilotStatus(ctx context.Context, dir string, configs []string, now time.Time) (runfiles.AutopilotStatus, error) {
	s, err := runfiles.ReadAutopilotStatus(dir, now)
	if err == nil {
		s.Pending = autopilot.PendingIn(ctx, dir, configs)
	}
	return s, err
}

// corruptStateHint says how to recover from a state.json in files that
// ralph cannot read. The event log is the source of truth and the
// checkpoint can be rebuilt from it, which ralph loop does on its resume
// (a chain's step's on its chain's); status only reads, so it must not.
func corruptStateHint(files runfiles.Dir, inChain bool) string {
	if inChain {
		return runfiles.StateFile + " is only a checkpoint of the step's event log: `ralph chain resume` resumes the step's loop, which moves it aside to " +
			filepath.Join(files.Path(), runfiles.CorruptStateName("<time>")) + " and rebuilds the run from the log; `ralph events` shows the log meanwhile"
	}
	return runfiles.StateFile + " is only a checkpoint of the event log: `ralph loop --resume` moves it aside to " +
		filepath.Join(runfiles.DirName, runfiles.CorruptStateName("<time>")) + " and rebuilds the run from the log\n" +
		"`ralph loop --fresh` starts a new run instead, and `ralph events` shows the log meanwhile\n" +
		"or remove " + filepath.Join(runfiles.DirName, runfiles.StateFile) + " yourself: the next `ralph loop --resume` rebuilds it the same way"
}
