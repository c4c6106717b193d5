package runfiles

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// A reader beside a running loop sees whole records only: a line still
// being written is read once it ends, from where the last read stopped.
func TestActivityIsReadWholeLinesFromWhereTheLastReadStopped(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(In(ws).Run("r1"), 0o700))
	w, err := OpenActivity(ws, "r1")
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Append(ActivityRecord{Iteration: 1, Kind: events.ActivityText, Text: "one"}))
	path := In(ws).Activity("r1")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString(`{"iteration":2,"kind":"text","text":"tw`)
	require.NoError(t, err)

	var got []string
	visit := func(r ActivityRecord) { got = append(got, r.Text) }
	next := ReadActivity(path, 0, visit)
	assert.Equal(t, []string{"one"}, got)

	_, err = f.WriteString("o\"}\nnot json\n")
	require.NoError(t, err)
	got = nil
	end := ReadActivity(path, next, visit)
	assert.Equal(t, []string{"two"}, got, "the finished line, and the line that is no record passed over")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, info.Size(), end)
	assert.Equal(t, end, ReadActivity(path, end, visit), "nothing new, nothing read")
}

// BenchmarkActivityAppend measures one line of activity.jsonl, as written
// for each report within max_activity_bytes: a 100-byte line of text.
func BenchmarkActivityAppend(b *testing.B) {
	ws := b.TempDir()
	require.NoError(b, os.MkdirAll(In(ws).Run("r1"), 0o700))
	w, err := OpenActivity(ws, "r1")
	require.NoError(b, err)
	defer w.Close()
	rec := ActivityRecord{Iteration: 1, Hat: "builder", Kind: events.ActivityText, Text: strings.Repeat("0123456789", 10)[:99]}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}
