package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/testhook"
)

// What ralph may hold, at most, however much an agent prints or however
// long a line of its event log: ralph itself takes about 20 MiB.
const (
	peakRSSBound       = 100 << 20 // a loop whose agent printed 200 MB
	readerPeakRSSBound = 60 << 20  // `ralph status` on a log with a 50 MB line
)

// boundedRun is a ralph command run to its end with its peak memory.
type boundedRun struct {
	result
	peakRSS int64 // bytes: the most ralph held resident at once (VmHWM)
}

// ralphMeasured runs ralph with args in w and reads its peak resident
// memory as it exits (testhook.ExitStats: VmHWM of /proc/self/status). The
// wait4 figure would not do: it counts the memory of the test binary that
// forked ralph.
func (w *workspace) ralphMeasured(args ...string) boundedRun {
	w.t.Helper()
	stats := filepath.Join(w.t.TempDir(), "stats.jsonl")
	r := w.ralphEnv([]string{statsEnv + "=" + stats}, args...)
	data, err := os.ReadFile(stats)
	require.NoError(w.t, err, "ralph wrote no stats: %s", r.stderr)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var last testhook.ResourceSample
	require.NoError(w.t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
	require.True(w.t, last.Exit, "the last sample is the exit's")
	require.Positive(w.t, last.PeakRSSKiB)
	return boundedRun{result: r, peakRSS: int64(last.PeakRSSKiB) << 10}
}

// An agent that prints 200 MB of lines costs ralph a bounded amount of
// memory; the raw output file gets all of it, activity.jsonl a bounded
// part, and both the terminal and the final text say what was cut. (On
// main before the bounds: 1.4 GB resident, 760 MB of activity.jsonl.)
func TestE2EHugeAgentOutputIsBounded(t *testing.T) {
	// Not parallel: the peak is of a ralph whose collector a starved CPU
	// slows (the heap grows past what is live), near its bound already.
	if raceBuild {
		t.Skip("ralph runs under the race detector here, which holds several times the memory ralph does; the end-to-end pass (make e2e) measures it")
	}
	w := newWorkspace(t)
	const line = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" // 100 bytes, with the newline
	w.write("agent.sh", "#!/bin/sh\nyes "+line[:99]+" | head -c 200000000\necho '"+tag("LOOP_COMPLETE", "done")+"'\n")
	require.NoError(t, os.Chmod(filepath.Join(w.dir, "agent.sh"), 0o755))
	w.write("ralph.yml", "cli:\n  backend: command\n  command: ./agent.sh\nevent_loop:\n  prompt: print a lot\n  max_iterations: 1\n  completion_confirmations: 1\n")

	r := w.ralphMeasured("loop")
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("peak RSS %d MiB", r.peakRSS>>20)
	assert.Less(t, r.peakRSS, int64(peakRSSBound), "ralph held %d MiB", r.peakRSS>>20)

	runs, err := filepath.Glob(filepath.Join(w.dir, ".ralph", "runs", "*"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	raw, err := os.Stat(filepath.Join(runs[0], "iter-0001.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, int64(200_000_000+len(tag("LOOP_COMPLETE", "done"))+1), raw.Size(), "the raw output gets everything")
	act, err := os.ReadFile(filepath.Join(runs[0], "activity.jsonl"))
	require.NoError(t, err)
	t.Logf("activity.jsonl %d KiB", len(act)>>10)
	assert.Less(t, len(act), 3<<19, "1 MiB of activity and the notes")
	assert.Contains(t, string(act), "max_activity_bytes", "activity.jsonl says what it left out")
	assert.Contains(t, r.stderr, "what it does next is not shown, nor recorded in activity.jsonl (max_activity_bytes)")
	assert.Contains(t, r.stderr, "ralph keeps its end, where <event> tags are looked for (max_output_text_bytes)")
}

// A 50 MB line in the event log (an agent's tool appended it) is read past,
// not held: `ralph status`, `ralph events` and a resume stay small, the
// line counts as one malformed line, and the run goes on. (On main before
// the bound: 600 MB for status, 410 MB for the resume.)
func TestE2EHugeEventLineIsReadPast(t *testing.T) {
	// Not parallel: the peak is of a ralph whose collector a starved CPU
	// slows (the heap grows past what is live), near its bound already.
	if raceBuild {
		t.Skip("ralph runs under the race detector here, which holds several times the memory ralph does; the end-to-end pass (make e2e) measures it")
	}
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: go on\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("thinking"), say(tag("LOOP_COMPLETE", "done"))}})
	r := w.ralph("loop", "--max-iterations", "1")
	require.Equal(t, 2, r.code, r.stderr)

	logPath, err := currentLogPath(w.dir)
	require.NoError(t, err)
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"topic":"build.log","payload":"` + strings.Repeat("x", 50_000_000) + "\"}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	status := w.ralphMeasured("status")
	require.Equal(t, 0, status.code, status.stderr)
	t.Logf("status: peak RSS %d MiB", status.peakRSS>>20)
	assert.Less(t, status.peakRSS, int64(readerPeakRSSBound))
	assert.Contains(t, status.stdout, "max_iterations")

	evs := w.ralphMeasured("events")
	require.Equal(t, 0, evs.code, evs.stderr)
	t.Logf("events: peak RSS %d MiB", evs.peakRSS>>20)
	assert.Less(t, evs.peakRSS, int64(readerPeakRSSBound))
	assert.Contains(t, evs.stdout, "(too long)")
	assert.Contains(t, evs.stdout, "50000034 bytes, not read")

	resumed := w.ralphMeasured("loop", "--resume", "--max-iterations", "2")
	require.Equal(t, 0, resumed.code, resumed.stderr)
	t.Logf("resume: peak RSS %d MiB", resumed.peakRSS>>20)
	assert.Less(t, resumed.peakRSS, int64(peakRSSBound))
	assert.Contains(t, resumed.stderr, "malformed lines 1")
	assert.NotContains(t, w.read(".ralph/state.json"), "xxxxxxxx", "nothing of the line reaches the checkpoint")
	assert.False(t, bytes.Contains([]byte(w.read(".ralph/state.json")), []byte("build.log")))
}

// `ralph emit -` with more on stdin than an event line holds keeps the
// payload's beginning and end, says what it left out, and writes a line
// every reader reads; --json with too much is refused with a hint.
func TestEmitCutsAPayloadTooLongForALine(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	log := filepath.Join(w.dir, "events.jsonl")
	r := w.ralphShell(`(echo FIRST; yes 'a line of build output' | head -c 30000000; echo LAST) | "$RALPH" emit build.log -`,
		"RALPH_EVENTS_FILE="+log)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "bytes in the middle of the payload read from stdin were left out: an event line holds at most 1048576 bytes")

	recs := readLog(t, log)
	require.Len(t, recs, 1)
	require.NoError(t, recs[0].Err)
	assert.LessOrEqual(t, len(recs[0].Line)+1, events.MaxLineBytes)
	payload := recs[0].Event.PayloadText()
	assert.True(t, strings.HasPrefix(payload, "FIRST\n"))
	assert.True(t, strings.HasSuffix(payload, "LAST\n"))
	assert.Contains(t, payload, "bytes cut by ralph: an event line holds at most 1048576 bytes")

	r = w.ralphShell(`(printf '['; yes '1,' | head -c 3000000; printf '1]') | "$RALPH" emit build.data --json -`, "RALPH_EVENTS_FILE="+log)
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "an event line holds at most 1048576")
	assert.Contains(t, r.stderr, "ralph: hint: write the data to a file and emit its path")
	assert.Len(t, readLog(t, log), 1, "nothing appended")
}

func readLog(t *testing.T, path string) []events.Record {
	t.Helper()
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	return recs
}
