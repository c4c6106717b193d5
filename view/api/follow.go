package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/events"
)

// rereadEvery is how often a follow reads its log even when the kernel
// said nothing: a lost notification (an overflowed queue) delays a line,
// never loses it.
const rereadEvery = 2 * time.Second

// Follow hands fn the complete lines of the log at path from offset on
// (which must start a line: 0, or a Line's Next), in batches as they are
// appended, until ctx is done (nil) or fn or a read fails (that error). The
// first batch is what the log already holds past offset, possibly empty. A
// log that does not exist yet is empty until it is created. Every line is
// handed over once, in order, and never a partial one.
func Follow(ctx context.Context, path string, offset int64, fn func([]events.Record) error) error {
	// The watch starts before the first read, so a line appended in
	// between is announced rather than missed.
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(path)); err != nil {
		return fmt.Errorf("follow %s: watch its directory: %w", path, err)
	}
	rd := events.NewReader(path, offset)
	tick := time.NewTicker(rereadEvery)
	defer tick.Stop()
	target := filepath.Clean(path)
	for first := true; ; first = false {
		recs, err := rd.Read()
		if err != nil {
			return err
		}
		if len(recs) > 0 || first {
			if err := fn(recs); err != nil {
				return err
			}
		}
		if !awaitChange(ctx, w, tick.C, target) {
			return nil
		}
	}
}

// awaitChange waits until the watcher reports a write to target or the
// reread tick fires (true), or ctx is done (false).
func awaitChange(ctx context.Context, w *fsnotify.Watcher, tick <-chan time.Time, target string) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case _, ok := <-w.Errors:
			return ok // an overflow: read to see what was missed
		case ev, ok := <-w.Events:
			if !ok {
				return false
			}
			if ev.Has(fsnotify.Write|fsnotify.Create) && filepath.Clean(ev.Name) == target {
				return true
			}
		}
	}
}

// StartsLine reports whether a line of the log at path starts at offset
// (> 0): the byte before it ends a line. A stream resumes only there.
func StartsLine(path string, offset int64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, offset-1); err != nil {
		return false, err
	}
	return b[0] == '\n', nil
}
