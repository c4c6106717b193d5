package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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

// Follows are the follows of one process: they share one kernel watcher
// (so that a server with many streams holds one inotify instance) and one
// reader per log, so that a line appended to a log many clients follow is
// read and decoded once, however many they are. The zero Follows is not
// ready: make one with NewFollows.
type Follows struct {
	watch *treewatch.Shared

	mu sync.Mutex
	// logs are the logs followed now, each by its reader.
	logs map[string]*tail
}

// NewFollows is the follows that learn of appends from watch.
func NewFollows(watch *treewatch.Shared) *Follows {
	return &Follows{watch: watch, logs: map[string]*tail{}}
}

// Follow hands fn the complete lines of the log at path from offset on
// (which must start a line: 0, or a Line's Next), in batches as they are
// appended, until ctx is done (nil) or fn or a read fails (that error).
// The first batches are what the log already holds past offset (one empty
// batch when it holds nothing). A log that does not exist yet is empty
// until it is created. Every line is handed over once, in order, and never
// a partial one.
//
// What the log holds already, each follow reads on its own; what is
// appended after, the reader the follows of the log share reads, once,
// from the kernel's notifications (or every rereadEvery, where its
// directory cannot be watched), and hands every follow the same records:
// fn must not change them. A follow whose fn falls behind by more than
// maxQueued batches reads on its own until it has caught up.
func (fs *Follows) Follow(ctx context.Context, path string, offset int64, fn func([]events.Record) error) error {
	next, err := catchUp(path, offset, -1, fn)
	if err != nil {
		return err
	}
	t, f, at := fs.join(path, next)
	defer fs.leave(t, f)
	for {
		if at > next {
			// The shared reader is further on: what lies between is read
			// here, and its later batches go on from there.
			if next, err = catchUp(path, next, at, fn); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.c:
		}
		var batches [][]events.Record
		batches, at, err = t.take(f)
		if err != nil {
			return err
		}
		for _, recs := range batches {
			if recs = unseen(recs, next); len(recs) == 0 {
				continue
			}
			if err := fn(recs); err != nil {
				return err
			}
			next = recs[len(recs)-1].End()
		}
	}
}

// unseen is the records of recs from offset next on: a follow that read
// on its own past where the shared reader was has seen the others.
func unseen(recs []events.Record, next int64) []events.Record {
	for i, rec := range recs {
		if rec.Offset >= next {
			return recs[i:]
		}
	}
	return nil
}

// maxQueued bounds the batches a follow has not taken yet: a client that
// stops reading holds the log's new lines in memory up to this many
// reads, then reads them from the file again when it comes back.
const maxQueued = 256

// tail is the reader of one log that its follows share.
type tail struct {
	path string
	stop context.CancelFunc

	mu sync.Mutex
	// next is where the reader reads on: each batch handed out starts
	// there.
	next int64
	subs map[*subscriber]bool
}

// subscriber is one follow of a tail: the batches it has not taken yet.
type subscriber struct {
	c     chan struct{}
	queue [][]events.Record
	// lost says its queue overflowed and was dropped: it reads what it
	// missed on its own.
	lost bool
	err  error
}

// join adds a follow that has read the log up to next; at is where the
// batches it will be handed start.
func (fs *Follows) join(path string, next int64) (*tail, *subscriber, int64) {
	key := filepath.Clean(path)
	if abs, err := filepath.Abs(key); err == nil {
		key = abs
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	t := fs.logs[key]
	if t == nil {
		ctx, cancel := context.WithCancel(context.Background())
		t = &tail{path: key, stop: cancel, next: next, subs: map[*subscriber]bool{}}
		fs.logs[key] = t
		go fs.read(ctx, t)
	}
	f := &subscriber{c: make(chan struct{}, 1)}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.subs[f] = true
	return t, f, t.next
}

// leave ends a follow; the reader goes with its log's last follow.
func (fs *Follows) leave(t *tail, f *subscriber) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	t.mu.Lock()
	delete(t.subs, f)
	empty := len(t.subs) == 0
	t.mu.Unlock()
	if empty {
		t.stop()
		if fs.logs[t.path] == t {
			delete(fs.logs, t.path)
		}
	}
}

// read reads t's log as it grows, handing each batch to its follows,
// until ctx ends or a read fails, which every follow is told.
func (fs *Follows) read(ctx context.Context, t *tail) {
	// The watch starts before the first read, so a line appended in
	// between is announced rather than missed.
	sub := fs.watch.Subscribe(t.path)
	defer sub.Close()
	dir := filepath.Dir(t.path)
	watched := sub.Add(dir) == nil // without it, the tick reads on
	t.mu.Lock()
	rd := events.NewReader(t.path, t.next)
	t.mu.Unlock()
	tick := time.NewTicker(rereadEvery)
	defer tick.Stop()
	for {
		recs, err := rd.Read()
		if err != nil {
			fs.fail(t, err)
			return
		}
		if len(recs) > 0 {
			t.hand(recs, rd.Offset())
		}
		if !awaitChange(ctx, sub, tick.C) {
			return
		}
		if !watched {
			watched = sub.Add(dir) == nil
		}
	}
}

// hand queues recs for every follow of t.
func (t *tail) hand(recs []events.Record, end int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next = end
	for f := range t.subs {
		if f.lost {
			continue
		}
		if len(f.queue) == maxQueued {
			f.queue, f.lost = nil, true
		} else {
			f.queue = append(f.queue, recs)
		}
		f.signal()
	}
}

// fail tells t's follows that its log can no longer be read; a later
// follow of the log reads it anew.
func (fs *Follows) fail(t *tail, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.logs[t.path] == t {
		delete(fs.logs, t.path)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for f := range t.subs {
		f.err = err
		f.signal()
	}
}

// take is what f was handed since it last took; a follow that lost its
// queue is told where the batches it will be handed start (at), to read
// up to there on its own.
func (t *tail) take(f *subscriber) (batches [][]events.Record, at int64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f.lost {
		f.lost = false
		return nil, t.next, f.err
	}
	batches, f.queue = f.queue, nil
	return batches, 0, f.err
}

func (f *subscriber) signal() {
	select {
	case f.c <- struct{}{}:
	default: // one is pending: the follow takes both batches at once
	}
}

// catchUp hands fn what the log holds past offset, up to end (the log's
// size when end < 0), in batches of at most followBatch lines (one empty
// batch when there is none), and returns the offset past the last line
// handed over.
func catchUp(path string, offset, end int64, fn func([]events.Record) error) (int64, error) {
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
	if end < 0 {
		end = info.Size()
	}
	if info.Size() < max(offset, end) {
		return offset, fmt.Errorf("read event log %s: %w (%d bytes, offset %d); it was truncated or replaced",
			path, events.ErrTruncated, info.Size(), max(offset, end))
	}
	next, sent := offset, false
	var batch []events.Record
	flush := func() error {
		err := fn(batch)
		batch, sent = nil, true
		return err
	}
	// Only up to end: what is appended meanwhile is the follow's, which
	// reads on from next.
	err = events.Scan(io.NewSectionReader(f, offset, end-offset), func(rec events.Record) error {
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
