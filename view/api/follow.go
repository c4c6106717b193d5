package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/treewatch"
)

// rereadEvery is how often a follow reads its log even when the kernel
// said nothing: a lost notification (an overflowed queue) delays a line,
// never loses it.
const rereadEvery = 2 * time.Second

// followBatch bounds how many lines Follow hands over at once while it
// catches up with what a log already holds: a stream from the start of a
// log of millions of lines holds a batch in memory, not the log.
const followBatch = 1024

// Follow hands fn the complete lines of the log at path from offset on
// (which must start a line: 0, or a Line's Next), in batches as they are
// appended, until ctx is done (nil) or fn or a read fails (that error).
// The first batches are what the log already holds past offset (one empty
// batch when it holds nothing). A log that does not exist yet is empty
// until it is created. Every line is handed over once, in order, and never
// a partial one.
//
// It learns of appends from watch, which the follows of one process share
// (so that a server with many streams holds one kernel watcher); where
// watch cannot watch the log's directory, the log is read every
// rereadEvery.
func Follow(ctx context.Context, watch *treewatch.Shared, path string, offset int64, fn func([]events.Record) error) error {
	// The watch starts before the first read, so a line appended in
	// between is announced rather than missed.
	sub := watch.Subscribe(path)
	defer sub.Close()
	_ = sub.Add(filepath.Dir(path)) // without it, the tick below reads on
	offset, err := catchUp(path, offset, fn)
	if err != nil {
		return err
	}
	rd := events.NewReader(path, offset)
	tick := time.NewTicker(rereadEvery)
	defer tick.Stop()
	for awaitChange(ctx, sub, tick.C) {
		recs, err := rd.Read()
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			continue
		}
		if err := fn(recs); err != nil {
			return err
		}
	}
	return nil
}

// catchUp hands fn what the log holds past offset, in batches of at most
// followBatch lines (one empty batch when there is none), and returns the
// offset past the last line handed over.
func catchUp(path string, offset int64, fn func([]events.Record) error) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return offset, fn(nil)
	}
	if err != nil {
		return offset, fmt.Errorf("read event log %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return offset, fmt.Errorf("read event log %s: %w", path, err)
	}
	if info.Size() < offset {
		return offset, fmt.Errorf("read event log %s: %w (%d bytes, offset %d); it was truncated or replaced",
			path, events.ErrTruncated, info.Size(), offset)
	}
	next, sent := offset, false
	var batch []events.Record
	flush := func() error {
		err := fn(batch)
		batch, sent = nil, true
		return err
	}
	// Only what the log holds now: what is appended meanwhile is the
	// follow's, which reads on from next.
	err = events.Scan(io.NewSectionReader(f, offset, info.Size()-offset), func(rec events.Record) error {
		rec.Offset += offset
		next = rec.End()
		if batch = append(batch, rec); len(batch) == followBatch {
			return flush()
		}
		return nil
	})
	if err == nil && (len(batch) > 0 || !sent) {
		err = flush()
	}
	return next, err
}

// awaitChange waits until sub is told the log changed or the reread tick
// fires (true), or ctx is done (false).
func awaitChange(ctx context.Context, sub *treewatch.Sub, tick <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-tick:
		return true
	case <-sub.C():
		return true
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
