package backends

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
)

// cutLines runs in through a lineCutter of limit, read in small pieces.
func cutLines(t *testing.T, in string, limit int) (string, *lineCutter) {
	t.Helper()
	c := newLineCutter(iotest.HalfReader(strings.NewReader(in)), limit)
	out, err := io.ReadAll(iotest.OneByteReader(c))
	require.NoError(t, err)
	return string(out), c
}

// Lines within the limit pass as they are; a longer one ends at the last
// space or tab of the bytes held back before the limit (or loses them all),
// keeps its newline, and is counted.
func TestLineCutter(t *testing.T) {
	cases := map[string]struct {
		in, want string
		lines    int
		cut      int64
	}{
		"short lines pass":            {in: "one\ntwo\n\nthree", want: "one\ntwo\n\nthree"},
		"a line of exactly the limit": {in: strings.Repeat("a", 20) + "\nb\n", want: strings.Repeat("a", 20) + "\nb\n"},
		"cut at a space in the held bytes": {
			in: "0123456789 abcdefghijklmnop\nnext\n", want: "0123456789\nnext\n", lines: 1, cut: 17,
		},
		"no space: the held bytes go": {
			in: strings.Repeat("s", 30) + "\nnext\n", want: strings.Repeat("s", 10) + "\nnext\n", lines: 1, cut: 20,
		},
		"a last line without a newline": {
			in: "ok\n" + strings.Repeat("z", 25), want: "ok\n" + strings.Repeat("z", 10), lines: 1, cut: 15,
		},
		"two cut lines": {
			in: strings.Repeat("x", 21) + "\n" + strings.Repeat("y", 40) + "\n", want: strings.Repeat("x", 10) + "\n" + strings.Repeat("y", 10) + "\n", lines: 2, cut: 11 + 30,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, c := cutLines(t, tc.in, 20)
			assert.Equal(t, tc.want, out)
			assert.Equal(t, tc.lines, c.cutLines)
			assert.Equal(t, tc.cut, c.cutBytes)
			if tc.lines > 0 {
				assert.Contains(t, c.warning(), "longer than 20 bytes and were cut")
			} else {
				assert.Empty(t, c.warning())
			}
		})
	}
}

// A secret value that a cut would halve is not passed on in part, when a
// space comes before it.
func TestLineCutterDoesNotHalveAWord(t *testing.T) {
	secret := "sk-" + strings.Repeat("7", 60)
	line := strings.Repeat("w", 100) + " " + secret + strings.Repeat("q", 200) + "\n"
	out, c := cutLines(t, line, 130)
	assert.Equal(t, strings.Repeat("w", 100)+"\n", out)
	assert.Equal(t, 1, c.cutLines)
	assert.NotContains(t, out, "sk-")
}

// Past the budget, activity is left out after one warning; usage still
// adds up (summed into one report at the end) and rate limits pass. Each
// report's text is cut to maxActivityText with a note.
func TestActivityBudget(t *testing.T) {
	var got []events.Activity
	b := &activityBudget{report: func(a events.Activity) { got = append(got, a) }, limit: 1000}
	text := strings.Repeat("t", 300)
	for range 5 {
		b.add(events.Activity{Kind: events.ActivityText, Text: text})
		b.add(events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 1, OutputTokens: 2}, CostUSD: 0.5})
	}
	b.add(events.Activity{Kind: events.ActivityRateLimit, Text: "slow down"})
	b.add(events.Activity{Kind: events.ActivityTool, Tool: events.ToolShell, Command: "ls"})
	b.finish()

	var texts, warnings int
	var usage events.Usage
	var cost float64
	for _, a := range got {
		switch a.Kind {
		case events.ActivityText:
			texts++
		case events.ActivityWarning:
			warnings++
		case events.ActivityUsage:
			usage = usage.Add(a.Usage)
			cost += a.CostUSD
		case events.ActivityTool:
			t.Errorf("a tool report past the budget: %+v", a)
		case events.ActivityRateLimit, events.ActivityError:
		}
	}
	assert.Equal(t, 2, texts, "two of 396 bytes fit in 1000")
	assert.Equal(t, 2, warnings, "one when the budget runs out, one at the end")
	assert.Contains(t, got[len(got)-1].Text, "4 activity report(s) of this iteration were left out past max_activity_bytes")
	assert.Equal(t, events.Usage{InputTokens: 5, OutputTokens: 10}, usage, "usage adds up")
	assert.InDelta(t, 2.5, cost, 1e-9)
	assert.Contains(t, got, events.Activity{Kind: events.ActivityRateLimit, Text: "slow down"})

	long := strings.Repeat("é", maxActivityText)
	got = nil
	(&activityBudget{report: func(a events.Activity) { got = append(got, a) }}).add(events.Activity{Kind: events.ActivityText, Text: long})
	require.Len(t, got, 1)
	assert.Less(t, len(got[0].Text), maxActivityText+200)
	assert.Contains(t, got[0].Text, "bytes more, cut by ralph")
}

// A writer to the feed waits while the parser is behind by feedLimit
// bytes, rather than holding all that the agent printed.
func TestFeedHoldsBoundedBytes(t *testing.T) {
	f := newFeed()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		chunk := make([]byte, 1<<20)
		for range 3 * feedLimit >> 20 {
			_, _ = f.Write(chunk)
		}
		_ = f.Close()
	}()
	// The writer gets at most the limit ahead of the reader.
	waitForFeed(t, f, feedLimit)
	f.mu.Lock()
	held, size := f.n, len(f.ring)
	f.mu.Unlock()
	assert.LessOrEqual(t, held, feedLimit)
	assert.LessOrEqual(t, size, feedLimit, "the ring never grows past the limit")
	select {
	case <-wrote:
		t.Fatal("the writer finished without the parser reading")
	default:
	}
	n, err := io.Copy(io.Discard, f)
	require.NoError(t, err)
	assert.Equal(t, int64(3*feedLimit), n)
	<-wrote
}

// waitForFeed waits until the feed holds at least n bytes.
func waitForFeed(t *testing.T, f *feed, n int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.n < n {
		f.cond.Wait()
	}
}

// writesRecorder keeps each write it gets apart.
type writesRecorder struct{ writes []string }

func (w *writesRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// A lineTee passes a stream on in whole lines, however it is read, and a
// line longer than it holds back in pieces; nothing is lost.
func TestLineTeeWritesWholeLines(t *testing.T) {
	long := strings.Repeat("x", maxPendingLine+maxPendingLine/2)
	in := "one\ntwo\n\nthree " + long + "\nfour\nlast without newline"
	for _, chunk := range []int{1, 3, 1000, 64 << 10} {
		rec := &writesRecorder{}
		var raw rawLog
		raw.open(rec, redact.New(nil, nil), 0)
		tee := &lineTee{log: &raw}
		for rest := in; rest != ""; {
			n := min(chunk, len(rest))
			tee.add([]byte(rest[:n]))
			rest = rest[n:]
		}
		tee.flush()
		raw.close()
		require.NoError(t, raw.err)
		assert.Equal(t, in+"\n", strings.Join(rec.writes, ""), "chunk %d", chunk)
		for _, w := range rec.writes {
			assert.True(t, strings.HasSuffix(w, "\n") || len(w) > maxPendingLine, "chunk %d: a write of a part line: %.40q", chunk, w)
		}
	}
}
