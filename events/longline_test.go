package events_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// A line longer than MaxLineBytes is a malformed record that says so and
// keeps only the line's first bytes; the lines around it read as usual, at
// the right offsets, and a Reader goes on after it.
func TestReaderLineTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	before := `{"topic":"before"}` + "\n"
	huge := `{"topic":"huge","payload":"` + strings.Repeat("x", 3*events.MaxLineBytes) + `"}`
	after := `{"topic":"after"}` + "\n"
	appendRaw(t, path, before+huge+"\n"+after)

	r := events.NewReader(path, 0)
	recs, err := r.Read()
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, "before", recs[0].Event.Topic)
	long := recs[1]
	require.ErrorIs(t, long.Err, events.ErrLineTooLong)
	require.ErrorIs(t, long.Err, events.ErrMalformed, "a line too long is malformed, as the engine counts it")
	assert.Contains(t, long.Err.Error(), "3145757 bytes, more than the 1048576 an event line may have")
	assert.Equal(t, int64(len(before)), long.Offset)
	assert.True(t, strings.HasPrefix(huge, string(long.Line)), "the line's first bytes")
	assert.Less(t, len(long.Line), 1024)
	assert.Equal(t, int64(len(huge)), int64(len(long.Line))+long.Cut)
	assert.Equal(t, int64(len(before)+len(huge)+1), long.End())
	assert.Equal(t, "after", recs[2].Event.Topic)
	assert.Equal(t, long.End(), recs[2].Offset)
	assert.Equal(t, int64(len(before)+len(huge)+1+len(after)), r.Offset())
}

// A line too long that is still being written is not consumed, and is read
// as one line too long once its newline comes.
func TestReaderLineTooLongStillBeingWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendRaw(t, path, `{"topic":"a"}`+"\n"+strings.Repeat("y", 2*events.MaxLineBytes))
	r := events.NewReader(path, 0)
	recs, err := r.Read()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, int64(14), r.Offset(), "the partial line waits")

	appendRaw(t, path, "yy\n")
	recs, err = r.Read()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.ErrorIs(t, recs[0].Err, events.ErrLineTooLong)
	assert.Equal(t, int64(2*events.MaxLineBytes+2), int64(len(recs[0].Line))+recs[0].Cut)
}

// Reading past a line of 32 MiB allocates less than half of it: the line
// is not gathered in memory.
func TestScanLineTooLongIsNotHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte("z"), 1<<20)
	for range 32 {
		_, err := f.Write(chunk)
		require.NoError(t, err)
	}
	_, err = f.WriteString("\n" + `{"topic":"after"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	for name, read := range map[string]func() []events.Record{
		"forward": func() []events.Record {
			recs, err := events.NewReader(path, 0).Read()
			require.NoError(t, err)
			return recs
		},
		"backward": func() []events.Record {
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			info, err := f.Stat()
			require.NoError(t, err)
			b := events.NewBackwardScanner(f, info.Size())
			var recs []events.Record
			for {
				rec, err := b.Prev()
				if errors.Is(err, io.EOF) {
					return recs
				}
				require.NoError(t, err)
				rec.Line = bytes.Clone(rec.Line)
				recs = append(recs, rec)
			}
		},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		recs := read()
		runtime.ReadMemStats(&after)
		require.Len(t, recs, 2, name)
		allocated := after.TotalAlloc - before.TotalAlloc
		// Holding the line would take its 32 MiB at least; reading past it
		// takes the buffers that grow to MaxLineBytes before it is known
		// to be too long, and the records' slice: about 7 MiB, 9 MiB with
		// the race detector's build.
		assert.Less(t, allocated, uint64(16<<20), "%s: allocated %d bytes for a log of 32 MiB", name, allocated)
	}
}

// The backward read gives the forward read's records in reverse, lines too
// long included (their offsets, first bytes and lengths), whatever cuts the
// blocks make.
func TestBackwardScannerMatchesForwardWithLongLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"\n", "\r\n", " \n", `{"topic":"a"}`, "x", strings.Repeat("long", 10), "é"}
	const maxLine = 12
	type line struct {
		offset   int64
		text     string
		cut      int64
		tooLong  bool
		blankish bool
	}
	for round := range 300 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		data := []byte(b.String())
		var want []line
		for _, buf := range []int{1, 5, 64} {
			var got []line
			end, err := events.ScanLinesLimit(bytes.NewReader(data), buf, maxLine, func(rec events.Record) error {
				got = append(got, line{rec.Offset, string(rec.Line), rec.Cut, errors.Is(rec.Err, events.ErrLineTooLong), false})
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, int64(bytes.LastIndexByte(data, '\n')+1), end)
			if want == nil {
				want = got
			}
			require.Equal(t, want, got, "round %d, buffer %d: %q", round, buf, data)
		}
		for _, rec := range want {
			require.Equal(t, rec.tooLong, rec.cut > 0)
			require.LessOrEqual(t, len(rec.text), maxLine)
			require.Equal(t, string(data[rec.offset:rec.offset+int64(len(rec.text))]), rec.text)
		}
		for _, block := range []int{1, 2, 3, 7, 64} {
			bs := events.NewBackwardScannerLimit(bytes.NewReader(data), int64(len(data)), block, maxLine)
			var got []line
			for {
				rec, err := bs.Prev()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				got = append(got, line{rec.Offset, string(rec.Line), rec.Cut, errors.Is(rec.Err, events.ErrLineTooLong), false})
			}
			slices.Reverse(got)
			require.Equal(t, want, got, "round %d, block %d: %q", round, block, data)
		}
	}
}

func TestFirstLine(t *testing.T) {
	long := `{"topic":"loop.started","payload":"` + strings.Repeat("x", 10<<10) + `"}`
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"empty", "", "", false},
		{"no newline yet", `{"topic":"a"}`, "", false},
		{"blank lines first", "\n  \n{\"topic\":\"a\"}\n{\"topic\":\"b\"}\n", `{"topic":"a"}`, true},
		{"longer than the first read", long + "\n{\"topic\":\"b\"}\n", long, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, ok, err := events.FirstLine(strings.NewReader(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, string(rec.Line))
		})
	}
}

func TestFirstLineTooLongSaysSo(t *testing.T) {
	in := strings.Repeat("x", events.MaxLineBytes+10) + "\n{}\n"
	rec, ok, err := events.FirstLine(strings.NewReader(in))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Error(t, rec.Err)
	assert.Positive(t, rec.Cut)
}
