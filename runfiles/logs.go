package runfiles

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// CurrentLog is the absolute path of the current run's event log in
// workspace: the one .ralph/current-events names, or else the newest
// events-*.jsonl. It returns ErrNoLog when there is none. A .ralph/ that
// is a link, or not the user's, is refused (internal/ralphdir): ralph
// emit, ask and answer append to the log this names.
func CurrentLog(workspace string) (string, error) {
	return CurrentLogIn(In(workspace))
}

// CurrentLogIn is CurrentLog for the run whose files are in d (a chain
// step's directory).
func CurrentLogIn(d Dir) (string, error) {
	dir, workspace := d.Path(), d.Workspace()
	if err := ralphdir.Check(dir); err != nil {
		return "", err
	}
	rel, err := CurrentLogRel(dir)
	switch {
	case err != nil:
		return "", err
	case rel == "":
		return "", ErrNoLog
	}
	return filepath.Join(workspace, rel), nil
}

// currentEventsFile is the log named by dir/current-events, or else the
// newest events-*.jsonl, relative to the workspace; "" when there is none.
func CurrentLogRel(dir string) (string, error) {
	path := filepath.Join(dir, CurrentEventsFile)
	data, err := ReadNoFollow(path)
	if err == nil && strings.TrimSpace(string(data)) != "" {
		return namedLog(dir, strings.TrimSpace(string(data)))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", ralphdir.Explain(path, fmt.Errorf("read %s: %w", CurrentEventsFile, err))
	}
	logs, err := EventLogs(dir)
	if err != nil || len(logs) == 0 {
		return "", err
	}
	return filepath.Join(Dir(dir).Rel(), filepath.Base(logs[len(logs)-1])), nil
}

// namedLog is the log that current-events in the .ralph directory dir
// names, relative to the workspace. Another Ralph may have named it by its
// absolute path. A log outside .ralph/ is refused: ralph appends to the
// current log, and a name a repository brings must not make it append
// anywhere else.
func namedLog(dir, named string) (string, error) {
	rel := named
	if filepath.IsAbs(rel) {
		if r, err := filepath.Rel(Dir(dir).Workspace(), rel); err == nil {
			rel = r
		}
	}
	if !inRalphDir(rel) {
		return "", &LogPathError{File: filepath.Join(dir, CurrentEventsFile), Log: named}
	}
	return filepath.Clean(rel), nil
}

// runLog is the path of the run's log rel in workspace, to read: not one
// that is a link, which would have ralph take another file for its log.
func LogPath(workspace, rel string) (string, error) {
	path := filepath.Join(workspace, rel)
	return path, ralphdir.NotLink(path)
}

// inRalphDir reports whether rel, a path relative to the workspace, names
// a file directly in .ralph/, or directly in a chain step's directory
// (.ralph/chains/<run>/step-N), as every event log ralph writes is.
func inRalphDir(rel string) bool {
	rel = filepath.Clean(rel)
	return !filepath.IsAbs(rel) && (filepath.Dir(rel) == DirName || isChainStepRel(filepath.Dir(rel)))
}

// EventLogs lists the event logs in the .ralph directory dir, oldest run
// first. Their names carry their start time to the second, and a run that
// started in the same second as another gets a suffix (-1, -2, …), which
// plain string order would put before the unsuffixed one.
func EventLogs(dir string) ([]string, error) {
	logs, err := filepath.Glob(filepath.Join(dir, eventLogPrefix+"*"+eventLogSuffix))
	if err != nil {
		return nil, fmt.Errorf("list event logs in %s: %w", dir, err)
	}
	slices.SortFunc(logs, func(a, b string) int {
		aStart, aSeq := logNameOrder(a)
		bStart, bSeq := logNameOrder(b)
		return cmp.Or(strings.Compare(aStart, bStart), cmp.Compare(aSeq, bSeq), strings.Compare(a, b))
	})
	return logs, nil
}

// logNameOrder splits events-YYYYMMDD-HHMMSS[-N].jsonl into its start time
// and N (0 when there is none).
func logNameOrder(path string) (start string, seq int) {
	name := logStamp(path)
	const stamp = len("20060102-150405")
	if len(name) <= stamp || name[stamp] != '-' {
		return name, 0
	}
	n, err := strconv.Atoi(name[stamp+1:])
	if err != nil {
		return name, 0
	}
	return name[:stamp], n
}
