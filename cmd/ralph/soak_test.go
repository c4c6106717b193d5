package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/testhook"
)

// soakEnv sets the soak test's iteration count; without it the test skips.
// `make soak` runs it with 2000.
const soakEnv = "RALPH_SOAK_ITERATIONS"

const soakReaders = 8

// TestSoak runs one long loop with a tiny agent while 8 `ralph events -f`
// readers follow its log and a `ralph status --json` poller reads its state.
// Every reader must print every line of the log once, in order; no status
// call may fail; and ralph's goroutines and open descriptors must be the
// same at iteration 100 as at the end, its live heap flat.
func TestSoak(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(soakEnv))
	if n < 200 {
		t.Skipf("set %s (at least 200; make soak uses 2000) to run the soak test", soakEnv)
	}
	w := newWorkspace(t)
	w.write("ralph.yml", fmt.Sprintf("event_loop:\n  prompt: Tick.\n  max_iterations: %d\n", n)+agentCLI())
	w.script(agentScript{Steps: []step{{Append: map[string]string{"progress.txt": "tick\n"},
		Say: tag("work.tick", "tick {{run}}")}}})
	stats := filepath.Join(w.state, "stats.jsonl")

	started := time.Now()
	loop := exec.Command(ralphBin, "loop", "--quiet")
	loop.Dir = w.dir
	loop.Env = append(append(os.Environ(), scriptEnv(w.state)...), statsEnv+"="+stats)
	var loopErr bytes.Buffer
	loop.Stderr = &loopErr
	require.NoError(t, loop.Start())
	t.Cleanup(func() { _ = loop.Process.Kill() })
	waitFor(t, "the run's first event log line", func() bool {
		path, err := currentLogPath(w.dir)
		info, statErr := os.Stat(path)
		return err == nil && statErr == nil && info.Size() > 0
	})

	readers := startFollowers(t, w.dir, soakReaders)
	loopDone := make(chan struct{})
	polls := pollStatus(t, w.dir, loopDone)

	err := loop.Wait()
	close(loopDone)
	require.Equal(t, 2, exitCodeOf(err), "the run ends at max_iterations:\n%s", loopErr.String())
	elapsed := time.Since(started)

	want := logLines(t, w.dir)
	for i, r := range readers {
		require.NoError(t, r.cmd.Wait(), "reader %d: %s", i, r.stderr.String())
		got := r.lines()
		require.Equal(t, len(want), len(got), "reader %d saw %d lines of %d", i, len(got), len(want))
		assert.Equal(t, want, got, "reader %d saw every line once, in order", i)
	}
	p := <-polls
	assert.Empty(t, p.failures, "ralph status --json failed")

	samples := readSamples(t, stats)
	early, last := samples[100], samples[n]
	require.NotZero(t, early.Iteration, "no sample at iteration 100")
	require.NotZero(t, last.Iteration, "no sample at iteration %d", n)
	report := fmt.Sprintf("soak: %d iterations in %s (%.1f ms each), %d log lines, %d readers each saw all, %d status calls; "+
		"at 100 → %d: goroutines %d → %d, fds %d → %d, live heap %.1f → %.1f MiB, rss %.1f → %.1f MiB",
		n, elapsed.Round(time.Second), float64(elapsed.Milliseconds())/float64(n), len(want), soakReaders, p.calls,
		n, early.Goroutines, last.Goroutines, early.FDs, last.FDs,
		mib(early.HeapInUse), mib(last.HeapInUse), float64(early.RSSKiB)/1024, float64(last.RSSKiB)/1024)
	t.Log(report)
	fmt.Println(report)
	assert.Equal(t, early.Goroutines, last.Goroutines, "goroutines")
	assert.Equal(t, early.FDs, last.FDs, "open file descriptors")
	assert.LessOrEqual(t, last.HeapInUse, early.HeapInUse+early.HeapInUse/2+(2<<20), "live heap grows with the run")
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func currentLogPath(dir string) (string, error) {
	rel, err := os.ReadFile(filepath.Join(dir, ".ralph", "current-events"))
	return filepath.Join(dir, strings.TrimSpace(string(rel))), err
}

// logLines is each line of the current log as "ts topic".
func logLines(t *testing.T, dir string) []string {
	t.Helper()
	path, err := currentLogPath(dir)
	require.NoError(t, err)
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	out := make([]string, len(recs))
	for i, r := range recs {
		require.NoError(t, r.Err)
		out[i] = r.Event.TS.Format(time.RFC3339Nano) + " " + r.Event.Topic
	}
	return out
}

type follower struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	t      *testing.T
}

func startFollowers(t *testing.T, dir string, n int) []*follower {
	t.Helper()
	var fs []*follower
	for range n {
		f := &follower{t: t}
		f.cmd = exec.Command(ralphBin, "events", "-f", "--json")
		f.cmd.Dir = dir
		f.cmd.Stdout, f.cmd.Stderr = &f.stdout, &f.stderr
		require.NoError(t, f.cmd.Start())
		t.Cleanup(func() { _ = f.cmd.Process.Kill() })
		fs = append(fs, f)
	}
	return fs
}

func (f *follower) lines() []string {
	var out []string
	sc := bufio.NewScanner(&f.stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev events.Event
		require.NoError(f.t, json.Unmarshal(sc.Bytes(), &ev), "%s", sc.Text())
		out = append(out, ev.TS.Format(time.RFC3339Nano)+" "+ev.Topic)
	}
	return out
}

type pollResult struct {
	calls    int
	failures []string
}

// pollStatus runs `ralph status --json` back to back until done closes.
func pollStatus(t *testing.T, dir string, done <-chan struct{}) <-chan pollResult {
	out := make(chan pollResult, 1)
	var once sync.Once
	go func() {
		var r pollResult
		defer once.Do(func() { out <- r })
		for {
			select {
			case <-done:
				return
			default:
			}
			cmd := exec.Command(ralphBin, "status", "--json")
			cmd.Dir = dir
			data, err := cmd.Output()
			r.calls++
			var st map[string]any
			if err != nil || json.Unmarshal(data, &st) != nil {
				r.failures = append(r.failures, fmt.Sprintf("%v: %s", err, data))
			}
		}
	}()
	return out
}

func readSamples(t *testing.T, path string) map[int]testhook.ResourceSample {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[int]testhook.ResourceSample{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s testhook.ResourceSample
		require.NoError(t, json.Unmarshal([]byte(line), &s))
		out[s.Iteration] = s
	}
	return out
}
