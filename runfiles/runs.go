package runfiles

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// RunListing is one run of a workspace, as `ralph events --runs` lists it.
type RunListing struct {
	RunID     string    `json:"run_id"`
	Started   time.Time `json:"started"`
	Log       string    `json:"log"` // relative to the workspace
	Objective string    `json:"objective,omitempty"`
	// Ended is how the run ended (a termination reason), "running" while
	// a loop holds the workspace for it, or "unfinished" when it was cut
	// off without a loop.terminate line (ralph was killed).
	Ended      string  `json:"ended"`
	ExitCode   *int    `json:"exit_code,omitempty"`
	Iterations int     `json:"iterations,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
	// CostSource and CostUnknown say how CostUSD is known (CostTotal).
	CostSource  CostSource `json:"cost_source,omitempty"`
	CostUnknown bool       `json:"cost_unknown,omitempty"`
	Current     bool       `json:"current"`
	// Chain and Step name the chain run and its step (from 1) whose loop
	// this run was; empty for a run of the workspace's own loop. Its log
	// and files are in the step's directory, .ralph/chains/<chain>/step-N.
	Chain string `json:"chain,omitempty"`
	Step  int    `json:"step,omitempty"`
	// EndedAt is the time of the run's loop.terminate line; zero for a
	// run without one (running, or cut off).
	EndedAt time.Time `json:"ended_at,omitzero"`
}

// Cost is the run's cost as its loop.terminate recorded it.
func (r RunListing) Cost() CostTotal {
	return CostTotal{USD: r.CostUSD, Computed: r.CostSource == CostComputed, Unknown: r.CostUnknown}
}

// Runs finds every run of the workspace from its event logs: its own
// loop's, then those of each chain's steps (Chain, Step), all oldest
// first. Each log says who it is in its first line (loop.started) and how
// it ended in its last loop.terminate (events published into the ended
// run may follow it), so only its first line and its end are read,
// however long the log. Logs' names carry their start time.
func Runs(workspace string) ([]RunListing, error) {
	runs, err := runsIn(In(workspace), namedCurrentLog(workspace))
	if err != nil {
		return nil, err
	}
	steps, err := ChainStepDirs(workspace)
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return runs, nil
	}
	for _, s := range steps {
		stepRuns, err := runsIn(s.Dir, "")
		if err != nil {
			return nil, err
		}
		for i := range stepRuns {
			stepRuns[i].Chain, stepRuns[i].Step = s.Chain, s.Step
		}
		runs = append(runs, stepRuns...)
	}
	slices.SortStableFunc(runs, func(a, b RunListing) int {
		aStart, aSeq := logNameOrder(a.Log)
		bStart, bSeq := logNameOrder(b.Log)
		return cmp.Or(strings.Compare(aStart, bStart), cmp.Compare(aSeq, bSeq))
	})
	return runs, nil
}

// runsIn lists the runs whose logs are in d (a workspace's .ralph, or a
// chain step's directory); current is the log the workspace's
// current-events names, relative to the workspace.
func runsIn(d Dir, current string) ([]RunListing, error) {
	paths, err := EventLogs(d.Path())
	if err != nil {
		return nil, err
	}
	held, holder := LockHeld(d.Lock())
	runs := make([]RunListing, 0, len(paths))
	for _, p := range paths {
		r, err := readRunListing(p)
		if err != nil {
			return nil, err
		}
		r.Log = filepath.Join(d.Rel(), filepath.Base(p))
		r.Current = r.Log == current
		if r.Ended == "unfinished" && held && (holder.RunID == r.RunID || (holder.RunID == "" && (r.Current || current == ""))) {
			r.Ended = "running"
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// namedCurrentLog is the log .ralph/current-events names, "" when none.
func namedCurrentLog(workspace string) string {
	data, err := os.ReadFile(filepath.Join(workspace, DirName, CurrentEventsFile))
	if err != nil {
		return ""
	}
	return filepath.Clean(strings.TrimSpace(string(data)))
}

func readRunListing(path string) (RunListing, error) {
	r := RunListing{Ended: "unfinished"}
	first, err := readFirstLine(path)
	if err != nil {
		return r, err
	}
	if ev, err := events.ParseLine(first); err == nil {
		r.Started = ev.TS
		var p struct {
			RunID     string `json:"run_id"`
			Objective string `json:"objective"`
		}
		if ev.Topic == TopicLoopStarted && json.Unmarshal(ev.Payload, &p) == nil {
			r.RunID, r.Objective = p.RunID, firstLineOf(p.Objective)
		}
	}
	if r.RunID == "" {
		// A log from another Ralph, or one whose first line was damaged:
		// it is still listed, under its file name.
		r.RunID = logStamp(path)
	}
	end, ended, err := RunEnd(path)
	if err != nil {
		return r, err
	}
	if ended {
		var p struct {
			Reason      string     `json:"reason"`
			ExitCode    int        `json:"exit_code"`
			Iterations  int        `json:"iterations"`
			CostUSD     float64    `json:"cost_usd"`
			CostSource  CostSource `json:"cost_source"`
			CostUnknown bool       `json:"cost_unknown"`
		}
		if json.Unmarshal(end.Payload, &p) == nil {
			code := p.ExitCode
			r.Ended, r.ExitCode, r.Iterations, r.CostUSD = p.Reason, &code, p.Iterations, p.CostUSD
			r.CostSource, r.CostUnknown = p.CostSource, p.CostUnknown
			r.EndedAt = end.TS
		}
	}
	return r, nil
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// readFirstLine reads a file's first complete line (without its newline), nil
// for an empty file, or for one whose first line is too long to be an event.
func readFirstLine(path string) ([]byte, error) {
	// Never through a link: a log is a file of ralph's directory.
	f, err := os.OpenFile(path, os.O_RDONLY|ralphdir.NoFollow, 0)
	if err != nil {
		return nil, ralphdir.Explain(path, fmt.Errorf("read event log: %w", err))
	}
	defer f.Close()
	rec, ok, err := events.FirstLine(f)
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	if !ok || rec.Err != nil {
		return nil, nil
	}
	return rec.Line, nil
}

// FindRun finds the event log of run id (or of the one run whose id starts
// with id): the archived checkpoint under .ralph/runs/<id>/ names it; else
// the logs' first lines are searched. A run not found is an
// *UnknownRunError, a prefix of several runs' ids an *AmbiguousRunError.
func FindRun(workspace, id string) (string, error) {
	if path, ok := archivedLog(workspace, id); ok {
		return path, nil
	}
	runs, err := Runs(workspace)
	if err != nil {
		return "", err
	}
	var matches []RunListing
	for _, r := range runs {
		if r.RunID == id {
			return filepath.Join(workspace, r.Log), nil
		}
		if strings.HasPrefix(r.RunID, id) {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 1:
		return filepath.Join(workspace, matches[0].Log), nil
	case 0:
		return "", &UnknownRunError{ID: id, Dir: filepath.Join(workspace, DirName)}
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.RunID
	}
	return "", &AmbiguousRunError{ID: id, Matches: ids}
}

// archivedLog reads events_file from .ralph/runs/<id>/state.json, the
// checkpoint a run leaves behind when a new one replaces it.
func archivedLog(workspace, id string) (string, bool) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(workspace, DirName, RunsDir, id, StateFile))
	if err != nil {
		return "", false
	}
	var st struct {
		EventsFile string `json:"events_file"`
	}
	if json.Unmarshal(data, &st) != nil || st.EventsFile == "" {
		return "", false
	}
	path := filepath.Join(workspace, st.EventsFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return path, true
}

// AwaitRun waits until a run starts in the workspace dir, its own loop's
// or a step's of a chain started there, and returns its log; "" when ctx
// ends first. It only reads (see awaitInRalphDir).
func AwaitRun(ctx context.Context, dir string, waiting func()) (string, error) {
	return awaitInRalphDir(ctx, dir, waiting, func() (string, error) {
		path, err := CurrentLog(dir)
		if errors.Is(err, ErrNoLog) {
			return latestChainStepLog(dir), nil
		}
		return path, err
	})
}

// latestChainStepLog is the log of the last step with one of the chain
// current-chain names, "" when there is none.
func latestChainStepLog(workspace string) string {
	d := In(workspace)
	data, err := ReadNoFollow(d.CurrentChain())
	id := strings.TrimSpace(string(data))
	if err != nil || !validRunDir(id) {
		return ""
	}
	steps, err := ChainStepDirs(workspace)
	if err != nil {
		return ""
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Chain != id {
			continue
		}
		if path, err := CurrentLogIn(steps[i].Dir); err == nil {
			return path
		}
	}
	return ""
}

// AwaitAutopilot waits until an autopilot starts in the repository dir and
// returns its event log; "" when ctx ends first. It only reads.
func AwaitAutopilot(ctx context.Context, dir string, waiting func()) (string, error) {
	path := In(dir).AutopilotEvents()
	return awaitInRalphDir(ctx, dir, waiting, func() (string, error) {
		_, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return path, err
	})
}

// awaitInRalphDir calls look whenever .ralph/ of the workspace dir may have
// changed, until it returns a path or an error, or ctx ends (""). It makes
// nothing: where .ralph/ does not exist yet, it watches the workspace for
// it to appear, then .ralph/ itself. waiting is called once the watch is
// in place, before the first look.
func awaitInRalphDir(ctx context.Context, dir string, waiting func(), look func() (string, error)) (string, error) {
	ralphDir := filepath.Join(dir, DirName)
	// Poll: a chain's step starts its log in a directory made after the
	// watch began, below .ralph/ (see AwaitRun).
	w, err := filewatch.New(filewatch.Options{Dirs: []string{dir}, Poll: time.Second, Match: func(path string) bool {
		return path == ralphDir || filepath.Dir(path) == ralphDir
	}})
	if err != nil {
		return "", fmt.Errorf("wait for a run in %s: %w", dir, err)
	}
	defer w.Close()
	watching := w.Add(ralphDir) == nil
	waiting()
	for {
		if !watching {
			// .ralph/ appeared since: its files are what a run writes.
			watching = w.Add(ralphDir) == nil
		}
		// Looked after the watch began, so a run that starts in between
		// is not missed.
		if path, err := look(); path != "" || err != nil {
			return path, err
		}
		select {
		case <-ctx.Done():
			return "", nil
		case <-w.C():
		}
	}
}
