package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/treewatch"
)

// follower runs Follow in the background and hands over its batches.
func follower(t *testing.T, path string, offset int64) (<-chan []events.Record, context.CancelFunc, <-chan error) {
	t.Helper()
	return sharedFollower(t, NewFollows(&treewatch.Shared{}), path, offset)
}

// sharedFollower is follower with the watcher it shares with others.
func sharedFollower(t *testing.T, follows *Follows, path string, offset int64) (<-chan []events.Record, context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	batches, done := make(chan []events.Record), make(chan error, 1)
	go func() {
		done <- follows.Follow(ctx, path, offset, func(recs []events.Record) error {
			select {
			case batches <- recs:
			case <-ctx.Done():
			}
			return nil
		})
	}()
	t.Cleanup(cancel)
	return batches, cancel, done
}

// nextLines waits for the next batch that is not empty.
func nextLines(t *testing.T, batches <-chan []events.Record) []string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case recs := <-batches:
			if len(recs) == 0 {
				continue
			}
			var lines []string
			for _, r := range recs {
				lines = append(lines, string(r.Line))
			}
			return lines
		case <-deadline:
			require.FailNow(t, "no lines came")
		}
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestFollowHandsOverCompleteLinesOnceAsTheyCome(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	batches, cancel, done := follower(t, path, 0)
	assert.Empty(t, <-batches, "the log does not exist yet: the first batch is empty")

	appendRaw(t, path, `{"topic":"a"}`+"\n"+`{"topic":"b"}`)
	assert.Equal(t, []string{`{"topic":"a"}`}, nextLines(t, batches), "a line without its newline is still being written")
	appendRaw(t, path, "\n"+`{"topic":"c"}`+"\n")
	assert.Equal(t, []string{`{"topic":"b"}`, `{"topic":"c"}`}, nextLines(t, batches))
	cancel()
	require.NoError(t, <-done)

	// From an offset: only what comes after it.
	batches, _, _ = follower(t, path, int64(len(`{"topic":"a"}`+"\n")))
	assert.Equal(t, []string{`{"topic":"b"}`, `{"topic":"c"}`}, nextLines(t, batches))
	ok, err := StartsLine(path, int64(len(`{"topic":"a"}`+"\n")))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = StartsLine(path, 3)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestFollowCatchesUpInBoundedBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	n := 2*followBatch + 10
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"topic":"t.%d"}`+"\n", i)
	}
	appendRaw(t, path, b.String()+`{"topic":"partial"`)
	batches, _, _ := follower(t, path, 0)
	var got []string
	var last int64
	for len(got) < n {
		recs := <-batches
		require.LessOrEqual(t, len(recs), followBatch)
		for _, r := range recs {
			require.Equal(t, last, r.Offset, "each line once, in order, at its offset")
			got, last = append(got, string(r.Line)), r.End()
		}
	}
	assert.Equal(t, fmt.Sprintf(`{"topic":"t.%d"}`, n-1), got[n-1])
	appendRaw(t, path, "}\n")
	assert.Equal(t, []string{`{"topic":"partial"}`}, nextLines(t, batches), "the partial line once it is whole")
}

func TestFollowsOfOneLogShareTheirWatcher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	follows := NewFollows(&treewatch.Shared{})
	var all []<-chan []events.Record
	for range 20 {
		batches, _, _ := sharedFollower(t, follows, path, 0)
		assert.Empty(t, <-batches)
		all = append(all, batches)
	}
	appendRaw(t, path, `{"topic":"a"}`+"\n")
	for _, batches := range all {
		assert.Equal(t, []string{`{"topic":"a"}`}, nextLines(t, batches), "every follow is told")
	}
}

// A log whose directory cannot be watched (it does not exist yet) is read
// every rereadEvery instead.
func TestFollowReadsALogItCannotWatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".ralph")
	path := filepath.Join(dir, "events.jsonl")
	batches, _, done := follower(t, path, 0)
	assert.Empty(t, <-batches)
	require.NoError(t, os.Mkdir(dir, 0o755))
	appendRaw(t, path, `{"topic":"a"}`+"\n")
	select {
	case recs := <-batches:
		require.Len(t, recs, 1)
		assert.Equal(t, `{"topic":"a"}`, string(recs[0].Line))
	case err := <-done:
		require.FailNow(t, "the follow ended", "%v", err)
	}
}

// collect gathers every line a follow hands over, and tells lines of each
// new count.
type collect struct {
	mu    sync.Mutex
	lines []string
	next  int64
	news  chan struct{}
}

func newCollect() *collect { return &collect{news: make(chan struct{}, 1)} }

func (c *collect) take(t *testing.T) func([]events.Record) error {
	return func(recs []events.Record) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, r := range recs {
			// Each line once, in order: every record starts where the
			// last ended.
			if r.Offset != c.next {
				return fmt.Errorf("a record at %d after one that ended at %d", r.Offset, c.next)
			}
			c.lines, c.next = append(c.lines, string(r.Line)), r.End()
		}
		select {
		case c.news <- struct{}{}:
		default:
		}
		return nil
	}
}

// await waits until c has n lines.
func (c *collect) await(t *testing.T, n int, done <-chan error) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		c.mu.Lock()
		have := len(c.lines)
		c.mu.Unlock()
		if have >= n {
			return
		}
		select {
		case <-c.news:
		case err := <-done:
			require.FailNow(t, "the follow ended", "%v", err)
		case <-deadline:
			require.FailNow(t, "lines missing", "%d of %d", have, n)
		}
	}
}

func (c *collect) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

func startFollow(t *testing.T, follows *Follows, path string, fn func([]events.Record) error) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- follows.Follow(ctx, path, 0, fn) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	return done
}

func topics(from, to int) []string {
	var lines []string
	for i := from; i < to; i++ {
		lines = append(lines, fmt.Sprintf(`{"topic":"t.%d"}`, i))
	}
	return lines
}

// Follows of one log, started while it grows, share one reader of it, and
// each has every line once, in order, however far on the reader was when
// it joined.
func TestFollowsOfOneLogShareOneReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	follows := NewFollows(&treewatch.Shared{})
	var all []*collect
	var dones []<-chan error
	for i := range 10 {
		appendRaw(t, path, topics(i, i+1)[0]+"\n")
		c := newCollect()
		dones = append(dones, startFollow(t, follows, path, c.take(t)))
		all = append(all, c)
	}
	appendRaw(t, path, strings.Join(topics(10, 20), "\n")+"\n")
	for i, c := range all {
		c.await(t, 20, dones[i])
		assert.Equal(t, topics(0, 20), c.all(), "follow %d", i)
	}
	follows.mu.Lock()
	assert.Len(t, follows.logs, 1, "one reader for the log")
	follows.mu.Unlock()
}

// A follow that stops taking what it is handed is not waited for: past
// maxQueued batches its queue is dropped, and once it takes again it reads
// what it missed from the log itself, each line still once and in order.
func TestAFollowThatFallsBehindReadsOnItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendRaw(t, path, topics(0, 1)[0]+"\n")
	follows := NewFollows(&treewatch.Shared{})
	fast := newCollect()
	fastDone := startFollow(t, follows, path, fast.take(t))
	fast.await(t, 1, fastDone)

	slow, held := newCollect(), make(chan struct{})
	take := slow.take(t)
	slowDone := startFollow(t, follows, path, func(recs []events.Record) error {
		if len(recs) > 0 && string(recs[0].Line) != topics(0, 1)[0] {
			<-held // stuck, as a client that stopped reading
		}
		return take(recs)
	})
	slow.await(t, 1, slowDone)

	// One batch each: the fast follow has each line before the next.
	n := maxQueued + 20
	for i := 1; i <= n; i++ {
		appendRaw(t, path, topics(i, i+1)[0]+"\n")
		fast.await(t, i+1, fastDone)
	}
	follows.mu.Lock()
	var lost bool
	for _, tl := range follows.logs {
		tl.mu.Lock()
		for f := range tl.subs {
			lost = lost || f.lost
		}
		tl.mu.Unlock()
	}
	follows.mu.Unlock()
	assert.True(t, lost, "the stuck follow's queue was dropped")

	close(held)
	slow.await(t, n+1, slowDone)
	assert.Equal(t, topics(0, n+1), slow.all())
	assert.Equal(t, topics(0, n+1), fast.all())
}

// Once the last follow of a log ends, nothing reads it.
func TestTheReaderEndsWithItsLastFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	follows := NewFollows(&treewatch.Shared{})
	batches, cancel, done := sharedFollower(t, follows, path, 0)
	assert.Empty(t, <-batches)
	cancel()
	require.NoError(t, <-done)
	follows.mu.Lock()
	defer follows.mu.Unlock()
	assert.Empty(t, follows.logs)
}
