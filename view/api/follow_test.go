package api

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// follower runs Follow in the background and hands over its batches.
func follower(t *testing.T, path string, offset int64) (<-chan []events.Record, context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	batches, done := make(chan []events.Record), make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, offset, func(recs []events.Record) error {
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
