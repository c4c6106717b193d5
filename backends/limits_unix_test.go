//go:build unix

package backends

// The output limits on a real process's output, which /bin/sh writes.

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// The raw output file gets its first bytes up to the limit, and then a line
// saying how many more there were.
func TestRunCapsTheRawOutput(t *testing.T) {
	t.Parallel()
	var raw bytes.Buffer
	res, err := shell(t, `head -c 10000 /dev/zero | tr '\0' x; echo; echo LOOP_COMPLETE`, Options{Limits: OutputLimits{RawBytes: 4096}}).
		Run(t.Context(), events.AgentRun{Dir: t.TempDir(), RawOutput: &raw, Timeout: time.Minute}, nil)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(res.FinalText, "LOOP_COMPLETE\n"), "the parser still reads everything")
	assert.Equal(t, strings.Repeat("x", 4096)+"\n[ralph: the raw output stops here: 5919 more bytes were not written (max_raw_output_bytes: 4096)]\n", raw.String())
}

// Output far beyond every limit leaves a run with bounded results: the
// final text's end, the activity within its budget and a warning of each
// cut, a long line cut; and the pipe is read to its end.
func TestRunBoundsWhatItKeepsOfHugeOutput(t *testing.T) {
	t.Parallel()
	// 20 MB of short lines, one line of 3 MB, then the answer.
	script := `yes 0123456789012345678901234567890123456789 | head -c 20000000; head -c 3000000 /dev/zero | tr '\0' y; echo; echo '<event topic="LOOP_COMPLETE">done</event>'`
	var acts []events.Activity
	limits := OutputLimits{LineBytes: 1 << 20, TextBytes: 64 << 10, ActivityBytes: 256 << 10, RawBytes: -1}
	var raw countingWriter
	res, err := shell(t, script, Options{Limits: limits}).Run(t.Context(), events.AgentRun{Dir: t.TempDir(), RawOutput: &raw, Timeout: 2 * time.Minute},
		func(a events.Activity) { acts = append(acts, a) })
	require.NoError(t, err)
	assert.Equal(t, int64(20000000+3000001+len(`<event topic="LOOP_COMPLETE">done</event>`)+1), raw.n, "no limit on the raw output: all of it")
	assert.LessOrEqual(t, len(res.FinalText), 64<<10)
	assert.True(t, strings.HasSuffix(res.FinalText, `<event topic="LOOP_COMPLETE">done</event>`+"\n"))
	assert.Len(t, events.ParseTags(res.FinalText), 1)

	size, warnings := 0, []string{}
	for _, a := range acts {
		size += len(a.Text) + activityOverhead
		if a.Kind == events.ActivityWarning {
			warnings = append(warnings, a.Text)
		}
	}
	assert.Less(t, size, 256<<10+4096, "the activity stays within its budget")
	joined := strings.Join(warnings, "\n")
	assert.Contains(t, joined, "1 line(s) of the agent's output were longer than 1048576 bytes and were cut")
	assert.Contains(t, joined, "max_activity_bytes")
	assert.Contains(t, joined, "max_output_text_bytes")
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
