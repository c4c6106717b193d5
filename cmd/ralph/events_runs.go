package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// runEntry is one run of a workspace, as `ralph events --runs` lists it.
type runEntry struct {
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
	Current    bool    `json:"current"`
}

// listRuns finds every run of the workspace from its event logs. Each log
// says who it is in its first line (loop.started) and how it ended in its
// last loop.terminate (events published into the ended run may follow it),
// so only its first line and its end are read, however long the log. Logs come oldest first: their names carry their start time.
func listRuns(workspace string) ([]runEntry, error) {
	dir := filepath.Join(workspace, engine.DirName)
	paths, err := engine.EventLogs(dir)
	if err != nil {
		return nil, err
	}
	current := currentLog(workspace)
	held, holder := engine.LockHeld(filepath.Join(dir, engine.LockFile))
	runs := make([]runEntry, 0, len(paths))
	for _, p := range paths {
		r, err := readRunEntry(p)
		if err != nil {
			return nil, err
		}
		r.Log = filepath.Join(engine.DirName, filepath.Base(p))
		r.Current = r.Log == current
		if r.Ended == "unfinished" && held && (holder.RunID == r.RunID || (holder.RunID == "" && r.Current)) {
			r.Ended = "running"
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// currentLog is the log .ralph/current-events names, "" when none.
func currentLog(workspace string) string {
	data, err := os.ReadFile(filepath.Join(workspace, engine.DirName, engine.CurrentEventsFile))
	if err != nil {
		return ""
	}
	return filepath.Clean(strings.TrimSpace(string(data)))
}

func readRunEntry(path string) (runEntry, error) {
	r := runEntry{Ended: "unfinished"}
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
		if ev.Topic == engine.TopicLoopStarted && json.Unmarshal(ev.Payload, &p) == nil {
			r.RunID, r.Objective = p.RunID, firstLineOf(p.Objective)
		}
	}
	if r.RunID == "" {
		// A log from another Ralph, or one whose first line was damaged:
		// it is still listed, under its file name.
		r.RunID = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "events-"), ".jsonl")
	}
	end, ended, err := engine.RunEnd(path)
	if err != nil {
		return r, err
	}
	if ended {
		var p struct {
			Reason     string  `json:"reason"`
			ExitCode   int     `json:"exit_code"`
			Iterations int     `json:"iterations"`
			CostUSD    float64 `json:"cost_usd"`
		}
		if json.Unmarshal(end.Payload, &p) == nil {
			code := p.ExitCode
			r.Ended, r.ExitCode, r.Iterations, r.CostUSD = p.Reason, &code, p.Iterations, p.CostUSD
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
// for an empty file.
func readFirstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read event log: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if errors.Is(err, io.EOF) {
		return nil, nil // empty, or one line still being written
	}
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	return line[:len(line)-1], nil
}

// findRun finds the event log of run id (or of the one run whose id starts
// with id): the archived checkpoint under .ralph/runs/<id>/ names it; else
// the logs' first lines are searched.
func findRun(workspace, id string) (string, error) {
	if path, ok := archivedLog(workspace, id); ok {
		return path, nil
	}
	runs, err := listRuns(workspace)
	if err != nil {
		return "", err
	}
	var matches []runEntry
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
		return "", withHint(fmt.Errorf("no run %q in %s", id, filepath.Join(workspace, engine.DirName)),
			"`ralph events --runs` lists the runs of this workspace")
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.RunID
	}
	return "", withHint(fmt.Errorf("%q names %d runs: %s", id, len(matches), strings.Join(ids, ", ")),
		"give more of the run id")
}

// archivedLog reads events_file from .ralph/runs/<id>/state.json, the
// checkpoint a run leaves behind when a new one replaces it.
func archivedLog(workspace, id string) (string, bool) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(workspace, engine.DirName, engine.RunsDir, id, engine.StateFile))
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

// printRuns writes the run list as a table, or as one JSON object a line.
func printRuns(w io.Writer, runs []runEntry, asJSON bool, loc *time.Location) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range runs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs here yet; start one with `ralph loop`")
		return err
	}
	const format = "%-1s %-22s  %-19s  %-24s  %4s  %9s  %s\n"
	fmt.Fprintf(w, format, "", "RUN", "STARTED", "ENDED", "ITER", "COST", "LOG")
	for _, r := range runs {
		mark, started, ended, iter, cost := "", "-", r.Ended, "-", "-"
		if r.Current {
			mark = "*"
		}
		if !r.Started.IsZero() {
			started = r.Started.In(loc).Format("2006-01-02 15:04:05")
		}
		if r.ExitCode != nil {
			ended = fmt.Sprintf("%s (exit %d)", r.Ended, *r.ExitCode)
			iter, cost = fmt.Sprint(r.Iterations), fmt.Sprintf("$%.4f", r.CostUSD)
		}
		if _, err := fmt.Fprintf(w, format, mark, r.RunID, started, ended, iter, cost, r.Log); err != nil {
			return err
		}
	}
	return nil
}
