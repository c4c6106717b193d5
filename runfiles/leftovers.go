package runfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/atomicfile"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// What a ralph that was killed leaves under .ralph/, for `ralph doctor`:
// a lock file that still names it, the process group of its agent, the
// temporary file of a write it did not finish.

// StaleLock reports whether the lock file at path names a holder (a
// loop's, or an autopilot's) that no longer holds it: a ralph killed
// before it could let go. The next ralph takes such a lock over, and says
// so; until then `ralph status` and the lock's readers see the holder.
func StaleLock(path string) (LockInfo, bool) {
	info, err := ReadLockInfo(path)
	if err != nil || info.PID == 0 {
		return info, false
	}
	if held, _ := LockHeld(path); held {
		return info, false
	}
	return info, true
}

// ClearStaleLock empties the holder of the lock file at path, as its
// holder would have on its way out, once it has the lock itself: a lock
// taken since (a ralph that starts meanwhile) is left alone and cleared
// is false. The file stays, as Release leaves it.
func ClearStaleLock(path string) (cleared bool, err error) {
	fl := ralphdir.Lock(path)
	locked, err := fl.TryLock()
	if err != nil {
		return false, ralphdir.Explain(path, err)
	}
	if !locked {
		return false, nil
	}
	defer func() { err = errors.Join(err, fl.Unlock()) }()
	f, err := ralphdir.OpenFile(filepath.Dir(path), path, os.O_WRONLY, 0)
	if err != nil {
		return false, err
	}
	return true, errors.Join(f.Truncate(lockInfoAt), f.Close())
}

// LeftAgent is a process group that a file under .ralph/ names as an
// agent's: agent.pgid, or a wave worker's agent-wave-NN.pgid.
type LeftAgent struct {
	Path string // the file that names it
	PGID int
}

// LeftAgents are the process groups agent.pgid and the wave workers'
// files name, in that order. The engine empties each file when its agent
// ends, so a group named there while no ralph holds the workspace's lock
// is one a killed ralph left; whether it still runs is the system's to
// say. Each file is read as every file under .ralph/ is, never through a
// link.
func LeftAgents(workspace string) []LeftAgent { return LeftAgentsIn(In(workspace)) }

// LeftAgentsIn is LeftAgents for the loop whose files are in d (a chain
// step's directory).
func LeftAgentsIn(d Dir) []LeftAgent {
	paths := []string{d.AgentPID()}
	if ralphdir.Check(d.Path()) == nil {
		entries, _ := os.ReadDir(d.Path())
		for _, entry := range entries {
			var n int
			if _, err := fmt.Sscanf(entry.Name(), WaveAgentPIDPattern, &n); err == nil && entry.Name() == fmt.Sprintf(WaveAgentPIDPattern, n) {
				paths = append(paths, filepath.Join(d.Path(), entry.Name()))
			}
		}
	}
	var out []LeftAgent
	for _, path := range paths {
		if pgid := leftGroup(path); pgid > 0 {
			out = append(out, LeftAgent{Path: path, PGID: pgid})
		}
	}
	return out
}

// leftGroup is the process group the file at path names, 0 for none.
func leftGroup(path string) int {
	data, err := ReadNoFollow(path)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pgid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pgid <= 1 {
		return 0
	}
	return pgid
}

// TempLeftover is a temporary file of an atomic write under .ralph/ that
// was never renamed over its file: the write was cut off.
type TempLeftover struct {
	// Path is relative to the workspace.
	Path     string    `json:"path"`
	Bytes    int64     `json:"bytes"`
	Modified time.Time `json:"modified"`
}

// TempLeftovers finds the temporary files under .ralph/ (and its
// subdirectories, never through a link) last changed before olderThan: a
// write takes milliseconds, so an older one is no ralph's work in
// progress.
func TempLeftovers(workspace string, olderThan time.Time) ([]TempLeftover, error) {
	d := In(workspace)
	if err := ralphdir.Check(d.Path()); err != nil {
		return nil, err
	}
	var found []TempLeftover
	err := filepath.WalkDir(d.Path(), func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() || !atomicfile.IsTemp(e.Name()) {
			return nil
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(olderThan) {
			return nil
		}
		rel, _ := filepath.Rel(workspace, path)
		found = append(found, TempLeftover{Path: rel, Bytes: fi.Size(), Modified: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look for leftover temporary files: %w", err)
	}
	return found, nil
}

// RemoveTempLeftover removes t, through an os.Root on .ralph/ so that
// nothing outside it can be named, and only when it is still a temporary
// file's name.
func RemoveTempLeftover(workspace string, t TempLeftover) error {
	d := In(workspace)
	rel, err := filepath.Rel(DirName, t.Path)
	if err != nil || !filepath.IsLocal(rel) || !atomicfile.IsTemp(filepath.Base(rel)) {
		return fmt.Errorf("remove %s: not a temporary file under %s", t.Path, DirName)
	}
	if err := ralphdir.Check(d.Path()); err != nil {
		return err
	}
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return fmt.Errorf("remove %s: %w", t.Path, err)
	}
	defer root.Close()
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", t.Path, err)
	}
	return nil
}
