package runfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// EndedNoLog is the Ended of a run directory (.ralph/runs/<id>/) that no
// event log claims: its log was removed by hand, or it was left by a run
// whose log never got a first line.
const EndedNoLog = "no_log"

// RunOnDisk is one run as `ralph runs` lists it: how it ended, what it
// keeps on disk and since when it has been idle.
type RunOnDisk struct {
	RunListing
	// LastActive is what the run's age is measured from: when it ended
	// (its loop.terminate line), or, for a run without one (cut off, or
	// running), its log's last change. A run's end is in its log; a
	// file's time is not, since a copy or a checkout resets it.
	LastActive time.Time `json:"last_active"`
	// AgeSeconds is how long ago LastActive was, when it was listed.
	AgeSeconds int64 `json:"age_seconds"`
	// Bytes is what the run keeps on disk: its event log and its
	// directory (raw agent output, activity, prompts, summary, the
	// archived checkpoint).
	Bytes int64 `json:"bytes"`
	// Dir is the run's directory relative to the workspace, "" when it
	// has none.
	Dir string `json:"dir,omitempty"`
}

// Age is how long the run has been idle at now.
func (r RunOnDisk) Age(now time.Time) time.Duration {
	return now.Sub(r.LastActive)
}

// Protected says why `ralph runs clean` must keep r whatever its age: ""
// when it may go.
func (r RunOnDisk) Protected() string {
	switch {
	case r.Ended == "running":
		return "running"
	case r.Current:
		return "the current run"
	case r.Chain != "":
		// The chain reads its steps' runs to resume and to hand off.
		return "a step of chain " + r.Chain
	}
	return ""
}

// RunsOnDisk lists the runs of a workspace (Runs) with what each keeps on
// disk, and the run directories no log claims after them; now dates their
// ages.
func RunsOnDisk(workspace string, now time.Time) ([]RunOnDisk, error) {
	listed, err := Runs(workspace)
	if err != nil {
		return nil, err
	}
	d := In(workspace)
	dirs, err := runDirs(d)
	if err != nil {
		return nil, err
	}
	runs := make([]RunOnDisk, 0, len(listed))
	for _, l := range listed {
		r := RunOnDisk{RunListing: l}
		log := filepath.Join(workspace, l.Log)
		if fi, err := os.Lstat(log); err == nil {
			r.Bytes, r.LastActive = fi.Size(), fi.ModTime()
		}
		if !l.EndedAt.IsZero() {
			r.LastActive = l.EndedAt
		}
		switch {
		case l.Chain != "":
			r.addStepDir(d.ChainStep(l.Chain, l.Step))
		case dirs[l.RunID]:
			delete(dirs, l.RunID)
			r.Dir = filepath.Join(DirName, RunsDir, l.RunID)
			size, _ := treeSize(d.Run(l.RunID))
			r.Bytes += size
		}
		r.AgeSeconds = int64(r.Age(now).Seconds())
		runs = append(runs, r)
	}
	for _, id := range slices.Sorted(maps.Keys(dirs)) {
		r := RunOnDisk{RunListing: RunListing{RunID: id, Ended: EndedNoLog}, Dir: filepath.Join(DirName, RunsDir, id)}
		if fi, err := os.Lstat(d.Run(id)); err == nil {
			r.LastActive = fi.ModTime()
		}
		r.Bytes, _ = treeSize(d.Run(id))
		r.AgeSeconds = int64(r.Age(now).Seconds())
		runs = append(runs, r)
	}
	return runs, nil
}

// addStepDir counts the directory a chain step's run keeps under its
// step's directory, when it has one.
func (r *RunOnDisk) addStepDir(step Dir) {
	if !validRunDir(r.RunID) || ralphdir.CheckPath(step.Path(), step.Run(r.RunID)) != nil {
		return
	}
	r.Dir = filepath.Join(step.Rel(), RunsDir, r.RunID)
	size, _ := treeSize(step.Run(r.RunID))
	r.Bytes += size
}

// runDirs are the names of the run directories under .ralph/runs/; none
// when it is missing or not a directory of ralph's (a link is never
// listed through).
func runDirs(d Dir) (map[string]bool, error) {
	dirs := map[string]bool{}
	runs := filepath.Join(d.Path(), RunsDir)
	if err := ralphdir.CheckPath(d.Path(), runs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return dirs, nil
		}
		return nil, err
	}
	entries, err := os.ReadDir(runs)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	for _, e := range entries {
		if validRunDir(e.Name()) {
			dirs[e.Name()] = true
		}
	}
	return dirs, nil
}

// validRunDir reports whether name can be a run's directory: one path
// element. A run id comes from a log's first line, which anyone may
// write.
func validRunDir(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`)
}

// treeSize adds up the sizes of the files under path without following
// a link.
func treeSize(path string) (int64, error) {
	var size int64
	err := filepath.WalkDir(path, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // what cannot be read is not counted
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	return size, err
}

// RemoveRun removes what run r keeps: its event log and its directory
// under .ralph/runs/. It works through an os.Root opened on .ralph/, so
// nothing outside .ralph/ can be reached by a name, and a link planted
// anywhere (the run's directory, a file in it) is removed, never followed;
// a .ralph/ or .ralph/runs/ that is itself a link is refused.
func RemoveRun(workspace string, r RunOnDisk) error {
	d := In(workspace)
	if err := ralphdir.Check(d.Path()); err != nil {
		return err
	}
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return fmt.Errorf("remove run %s: %w", r.RunID, err)
	}
	defer root.Close()
	if r.Dir != "" {
		if !validRunDir(r.RunID) {
			return fmt.Errorf("remove run %q: not a run directory's name", r.RunID)
		}
		if err := ralphdir.CheckPath(d.Path(), filepath.Join(d.Path(), RunsDir)); err != nil {
			return err
		}
		if err := root.RemoveAll(filepath.Join(RunsDir, r.RunID)); err != nil {
			return fmt.Errorf("remove run %s: %w", r.RunID, err)
		}
	}
	if r.Log != "" {
		name := filepath.Base(r.Log)
		if !inRalphDir(r.Log) || !IsEventLog(name) {
			return fmt.Errorf("remove run %s: %s is not an event log of .ralph/", r.RunID, r.Log)
		}
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove run %s: %w", r.RunID, err)
		}
	}
	return nil
}

// RunsCleaned is what CleanRuns did, or with DryRun would do.
type RunsCleaned struct {
	DryRun  bool        `json:"dry_run"`
	MaxAge  string      `json:"max_age"`
	Removed []RunOnDisk `json:"removed"`
	// Kept are the runs old enough to go that were kept, each with why.
	Kept []KeptRun `json:"kept"`
	// Freed is what the removed runs kept on disk, in bytes.
	Freed int64 `json:"freed_bytes"`
}

// KeptRun is a run CleanRuns kept though it is old enough to go.
type KeptRun struct {
	RunOnDisk
	Why string `json:"why"`
}

// CleanRuns removes the runs of a workspace idle for longer than maxAge
// (RunOnDisk.LastActive), except the current run and a running one; with
// dryRun it only says which it would remove. A run whose removal fails
// stops it, with what was removed before it reported.
func CleanRuns(workspace string, maxAge time.Duration, now time.Time, dryRun bool) (RunsCleaned, error) {
	done := RunsCleaned{DryRun: dryRun, Removed: []RunOnDisk{}, Kept: []KeptRun{}}
	runs, err := RunsOnDisk(workspace, now)
	if err != nil {
		return done, err
	}
	for _, r := range runs {
		if r.Age(now) <= maxAge {
			continue
		}
		if why := r.Protected(); why != "" {
			done.Kept = append(done.Kept, KeptRun{RunOnDisk: r, Why: why})
			continue
		}
		if held, holder := LockHeld(In(workspace).Lock()); held && holder.RunID == r.RunID {
			// It was resumed since it was listed.
			done.Kept = append(done.Kept, KeptRun{RunOnDisk: r, Why: "running"})
			continue
		}
		if !dryRun {
			if err := RemoveRun(workspace, r); err != nil {
				return done, err
			}
		}
		done.Removed = append(done.Removed, r)
		done.Freed += r.Bytes
	}
	return done, nil
}
