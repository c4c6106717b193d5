package runfiles

import (
	"path/filepath"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// Run modes, in Launch.Mode.
const (
	ModeLoop = "loop" // an objective worked on by hats (or the coordinator)
	ModeSpec = "spec" // the checkboxes of a spec file (SPEC mode)
)

// Launch is what the command line chose for a run beyond its config files:
// the mode, the spec file, which configs, hats and backend, and the limits
// given as flags. loop.started records it, and loop.resumed records it
// again with what the resume changed, so that `ralph loop --resume` can
// continue the run as it was started instead of falling back to defaults
// (a SPEC-mode run read as a plain one, a -c file forgotten, a limit given
// as a flag replaced by the config's). The engine only records it; the
// command line reads it back with PreviousLaunch.
type Launch struct {
	Mode string `json:"mode"`
	// SpecFile is the spec of a SPEC-mode run, relative to the workspace
	// when it is inside it.
	SpecFile string `json:"spec_file,omitempty"`
	// Configs are the -c files, absolute; none means ./ralph.yml was looked
	// up in the workspace.
	Configs []string `json:"configs,omitempty"`
	Hats    string   `json:"hats,omitempty"` // -H: a preset name or a file
	// Sets are the --set key.path=value assignments, in order; a resume
	// lays its own over them.
	Sets    []string `json:"sets,omitempty"`
	Backend string   `json:"backend,omitempty"` // --backend
	Model   string   `json:"model,omitempty"`   // --model
	// The limits given as flags (SPEC mode's -n and --all included); nil
	// or 0 means the config's applies.
	MaxIterations  int    `json:"max_iterations,omitempty"`
	MaxRuntimeMS   *int64 `json:"max_runtime_ms,omitempty"`
	StuckThreshold *int   `json:"stuck_threshold,omitempty"`
}

// PreviousLaunch returns how the workspace's current run was started, with
// the changes its resumes made; nil when there is no run, or when its log
// was written by a ralph that did not record it. It changes nothing, so it
// can be called before the workspace lock is taken.
func PreviousLaunch(workspace string) (*Launch, error) {
	return PreviousLaunchIn(In(workspace))
}

// PreviousLaunchIn is PreviousLaunch for the run whose files are in d: a
// workspace's .ralph, or a chain step's directory.
func PreviousLaunchIn(d Dir) (*Launch, error) {
	dir, workspace := d.Path(), d.Workspace()
	if err := ralphdir.Check(dir); err != nil {
		return nil, err
	}
	rel, err := CurrentLogRel(dir)
	if err != nil || rel == "" {
		return nil, err
	}
	path, err := LogPath(workspace, rel)
	if err != nil {
		return nil, err
	}
	var launch *Launch
	var offset int64
	// The checkpoint saves reading a long log from its start; the lines
	// past it (a resume that died before its first checkpoint) still count.
	st, _, err := Checkpoint{Path: filepath.Join(dir, StateFile)}.Load()
	if err == nil && filepath.Clean(st.EventsFile) == filepath.Clean(rel) {
		launch, offset = st.Launch, st.Offset
	}
	recs, err := events.NewReader(path, offset).Read()
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		if l := launchOf(rec); l != nil {
			launch = l
		}
	}
	return launch, nil
}

// launchOf is the launch a loop.started or loop.resumed line records.
func launchOf(rec events.Record) *Launch {
	if rec.Err != nil || rec.Event.Source != events.SourceRalph {
		return nil
	}
	switch rec.Event.Topic {
	case TopicLoopStarted, TopicLoopResumed:
	default:
		return nil
	}
	var r struct {
		Launch *Launch `json:"launch"`
	}
	Decode(rec.Event, &r)
	return r.Launch
}

// StartMode is how a run begins with respect to the run already in .ralph.
type StartMode string

const (
	// StartNew begins a new run; it refuses to replace one that is
	// unfinished (the engine's UnfinishedRunError), and archives one that ended.
	StartNew StartMode = "new"
	// StartResume continues the run in .ralph where it stopped.
	StartResume StartMode = "resume"
	// StartFresh begins a new run, archiving the previous one even when it
	// is unfinished.
	StartFresh StartMode = "fresh"
)
