package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	return sharedFollower(t, &treewatch.Shared{}, path, offset)
}

// sharedFollower is follower with the watcher it shares with others.
func sharedFollower(t *testing.T, watch *treewatch.Shared, path string, offset int64) (<-chan []events.Record, context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	batches, done := make(chan []events.Record), make(chan error, 1)
	go func() {
		done <- Follow(ctx, watch, path, offset, func(recs []events.Record) error {
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
	var watch treewatch.Shared
	var all []<-chan []events.Record
	for range 20 {
		batches, _, _ := sharedFollower(t, &watch, path, 0)
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
