package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// logLine is one line of a hand-written log: what a two-hat run writes.
type logLine struct {
	at      time.Duration // after the log's start
	topic   string
	source  string
	iter    int
	hat     string
	payload string // raw JSON
}

// sampleLog is a short run: the coordinator hands out a task, the builder
// builds (and writes a malformed line), the reviewer approves, the run
// completes. Times are minutes apart so --since can cut it.
var sampleLog = []logLine{
	{0, "loop.started", "ralph", 0, "", `{"run_id":"20261122-100000-abcdef","objective":"Add a --json flag","objective_source":"-p","hats":["builder","reviewer"]}`},
	{0, "task.start", "ralph", 0, "", `"Begin work on the objective."`},
	{1 * time.Minute, "iteration.started", "ralph", 0, "", `{"iteration":1,"hat":"ralph","events":[250],"backend":"claude"}`},
	{2 * time.Minute, "build.task", "tag", 1, "ralph", `"create hello.txt"`},
	{2 * time.Minute, "iteration.finished", "ralph", 0, "", `{"iteration":1,"hat":"ralph","outcome":"success","duration_ms":61000,"tokens":{"input_tokens":900,"output_tokens":300},"cost_usd":0.01}`},
	{2 * time.Minute, "event.routed", "ralph", 0, "", `{"offset":600,"topic":"build.task","to":["builder"]}`},
	{3 * time.Minute, "iteration.started", "ralph", 0, "", `{"iteration":2,"hat":"builder","events":[600],"backend":"claude"}`},
	{10 * time.Minute, "build.done", "agent", 2, "builder", `"tests: pass"`},
	{10 * time.Minute, "git.commit", "ralph", 0, "", `{"iteration":2,"hat":"builder","hash":"0123456789abcdef","subject":"add hello.txt"}`},
	{10 * time.Minute, "iteration.finished", "ralph", 0, "", `{"iteration":2,"hat":"builder","outcome":"failure","failure":"exit","message":"exit status 1","duration_ms":420000,"tokens":{"input_tokens":12000,"output_tokens":3000},"cost_usd":0.2}`},
	{-1, "", "", 0, "", ""}, // a malformed line
	{11 * time.Minute, "event.routed", "ralph", 0, "", `{"offset":900,"topic":"build.done","to":["reviewer"]}`},
	{11 * time.Minute, "event.rejected", "ralph", 0, "", `{"offset":950,"topic":"deploy.now","reason":"scope_violation","detail":"builder may publish only build.done"}`},
	{12 * time.Minute, "iteration.started", "ralph", 0, "", `{"iteration":3,"hat":"reviewer","events":[900],"backend":"claude"}`},
	{13 * time.Minute, "review.approved", "tag", 3, "reviewer", `{"score":9}`},
	{13 * time.Minute, "agent.rate_limited", "ralph", 0, "", `{"iteration":3,"hat":"reviewer","message":"429","wait_ms":30000}`},
	{14 * time.Minute, "task.complete", "ralph", 0, "", `{"iteration":3,"index":0,"text":"Add the flag"}`},
	{15 * time.Minute, "loop.terminate", "ralph", 0, "", `{"reason":"completed","exit_code":0,"message":"done","iterations":3,"cost_usd":0.21,"tokens":16200,"runtime_ms":900000}`},
}

// writeSampleLog writes sampleLog starting at start and returns its path,
// .ralph/events-….jsonl, named in .ralph/current-events.
func writeSampleLog(t *testing.T, dir string, start time.Time) string {
	t.Helper()
	var b strings.Builder
	for _, l := range sampleLog {
		if l.at < 0 {
			b.WriteString("{not json\n")
			continue
		}
		ev := events.Event{TS: start.Add(l.at), Topic: l.topic, Payload: json.RawMessage(l.payload), Iteration: l.iter,
			Hat: l.hat, Source: l.source}
		line, err := events.EncodeLine(ev)
		require.NoError(t, err)
		b.Write(line)
	}
	rel := filepath.Join(".ralph", "events-"+start.UTC().Format("20060102-150405")+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(b.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".ralph", "current-events"), []byte(rel+"\n"), 0o644))
	return filepath.Join(dir, rel)
}

func jsonTopics(t *testing.T, out string) []string {
	t.Helper()
	topics := []string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		ev, err := events.ParseLine([]byte(line))
		require.NoError(t, err, "--json prints event lines: %s", line)
		topics = append(topics, ev.Topic)
	}
	return topics
}

// TestEventsSinceADuration: --since 8m30s counts back from now (the other
// filters are in testdata/script/events.txtar, on a log with fixed times).
func TestEventsSinceADuration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSampleLog(t, dir, time.Now().Add(-20*time.Minute).Truncate(time.Second))
	r := runRalph(t, "-C", dir, "events", "--json", "--since", "8m30s")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"iteration.started", "review.approved", "agent.rate_limited", "task.complete", "loop.terminate"},
		jsonTopics(t, r.stdout))
}

// failingWriter refuses every write, like stdout on a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A listing that could not be written out is a failure, not exit 0.
func TestEventsReportsAFailedWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSampleLog(t, dir, time.Now())
	var stderr bytes.Buffer
	code := run([]string{"-C", dir, "events", "--json"}, strings.NewReader(""), failingWriter{}, &stderr)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr.String(), "no space left on device")
}

// TestEventsTableGolden renders the sample log as the table, in UTC.
func TestEventsTableGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeSampleLog(t, dir, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	p := &view.EventPrinter{W: &out, Loc: time.UTC}
	require.NoError(t, p.Header())
	require.NoError(t, events.Scan(f, p.Print))
	golden.Assert(t, "testdata/events/table.golden", out.String())
}

// TestEventsRuns runs two loops in one workspace, then lists the runs and
// reads the first one's log by its id.
func TestEventsRuns(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iterations: 3\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("done " + tag("LOOP_COMPLETE", "run {{run}}"))}})
	require.Equal(t, 0, w.ralph("loop").code)
	require.Equal(t, 0, w.ralph("loop").code)
	// A third log, cut off by a crash: no loop.terminate.
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, ".ralph", "events-20990101-000000.jsonl"),
		[]byte(`{"ts":"2099-01-01T00:00:00Z","topic":"loop.started","payload":{"run_id":"20990101-000000-aaaaaa","objective":"later"},"source":"ralph"}`+"\n"), 0o644))

	r := w.ralph("events", "--runs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []runfiles.RunListing
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var e runfiles.RunListing
		require.NoError(t, dec.Decode(&e))
		runs = append(runs, e)
	}
	require.Len(t, runs, 3)
	assert.Equal(t, "completed", runs[0].Ended)
	require.NotNil(t, runs[0].ExitCode)
	assert.Equal(t, 0, *runs[0].ExitCode)
	assert.Equal(t, 1, runs[0].Iterations)
	assert.False(t, runs[0].Current)
	assert.True(t, runs[1].Current, "current-events names the second run")
	assert.Equal(t, "unfinished", runs[2].Ended)
	assert.Equal(t, "20990101-000000-aaaaaa", runs[2].RunID)

	table := w.ralph("events", "--runs")
	require.Equal(t, 0, table.code, table.stderr)
	assert.Contains(t, table.stdout, "* "+runs[1].RunID)
	assert.Contains(t, table.stdout, "completed (exit 0)")

	for _, id := range []string{runs[0].RunID, runs[0].RunID[:len(runs[0].RunID)-3]} {
		first := w.ralph("events", "--run", id, "--json", "--topic", "LOOP_COMPLETE")
		require.Equal(t, 0, first.code, first.stderr)
		assert.Contains(t, first.stdout, `"payload":"run 1"`, "--run %s reads the first run's log", id)
		assert.NotContains(t, first.stdout, `"run 2"`)
	}
	// The archived checkpoint names the first run's log too.
	archived, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "runs", runs[0].RunID, "state.json"))
	require.NoError(t, err, "the second run archived the first one's state")
	var st struct {
		EventsFile string `json:"events_file"`
	}
	require.NoError(t, json.Unmarshal(archived, &st))
	assert.Equal(t, runs[0].Log, st.EventsFile)
}

// TestEventsRunsAfterAnEmitIntoAnEndedRun: an event published into a run
// that ended on a limit waits for its resume; the run has still ended, and
// --runs says how, not "unfinished".
func TestEventsRunsAfterAnEmitIntoAnEndedRun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iterations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("still working")}})
	require.Equal(t, 2, w.ralph("loop").code)
	emit := w.ralph("emit", "build.task", "next time, the parser")
	require.Equal(t, 0, emit.code, emit.stderr)

	r := w.ralph("events", "--runs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var run runfiles.RunListing
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &run))
	assert.Equal(t, "max_iterations", run.Ended)
	require.NotNil(t, run.ExitCode)
	assert.Equal(t, 2, *run.ExitCode)
	assert.Equal(t, 1, run.Iterations)
}

// followOutput starts `ralph events -f` and streams its stdout lines.
func startFollow(t *testing.T, dir string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(ralphBin, append([]string{"events", "-f"}, args...)...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

// nextLine waits at most d for a line.
func nextLine(t *testing.T, lines <-chan string, d time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		require.True(t, ok, "ralph events -f ended early")
		return l
	case <-time.After(d):
		t.Fatalf("no line within %s", d)
	}
	return ""
}

// waitExit waits at most d for the process to exit and returns its status.
func waitExit(t *testing.T, cmd *exec.Cmd, lines <-chan string, d time.Duration) int {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-lines:
			if ok {
				continue
			}
			code := exitCodeOf(cmd.Wait())
			require.GreaterOrEqual(t, code, 0, "ralph events -f was killed by a signal or did not run")
			return code
		case <-deadline:
			t.Fatalf("ralph events -f still running after %s", d)
		}
	}
}

// followWait bounds each wait for a follower's output: generous, since a
// loaded machine can hold up any process for seconds; a follower that
// missed a line would never print it.
const followWait = time.Minute

// writeRunningSampleLog writes the sample log without its terminate line,
// so the run is still going, and returns its path.
func writeRunningSampleLog(t *testing.T, dir string) string {
	t.Helper()
	path := writeSampleLog(t, dir, time.Now())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	cut := bytes.LastIndex(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	require.NoError(t, os.WriteFile(path, data[:cut+1], 0o644))
	return path
}

// TestEventsFollow: a line another process appends (ralph emit) is printed,
// and the follow ends by itself at loop.terminate.
func TestEventsFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeRunningSampleLog(t, dir)

	cmd, lines := startFollow(t, dir, "--json", "--last", "1")
	assert.Contains(t, nextLine(t, lines, followWait), `"topic":"task.complete"`, "--last 1 shows the last line first")

	emit := exec.Command(ralphBin, "emit", "build.done", "from another process")
	emit.Dir = dir
	out, err := emit.CombinedOutput()
	require.NoError(t, err, "%s", out)
	line := nextLine(t, lines, followWait)
	assert.Contains(t, line, `"topic":"build.done","payload":"from another process"`)

	// An agent's loop.terminate does not end the run; ralph's does.
	require.NoError(t, events.AppendTo(path, events.Event{Topic: "loop.terminate", Source: events.SourceAgent}))
	assert.Contains(t, nextLine(t, lines, followWait), `"source":"agent"`)
	require.NoError(t, events.AppendTo(path, events.Event{Topic: "loop.terminate", Source: events.SourceRalph,
		Payload: json.RawMessage(`{"reason":"completed","exit_code":0}`)}))
	assert.Contains(t, nextLine(t, lines, followWait), `"source":"ralph"`)
	assert.Equal(t, 0, waitExit(t, cmd, lines, followWait), "the follow ends with the run")
}

func TestEventsFollowStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRunningSampleLog(t, dir)
	cmd, lines := startFollow(t, dir, "--topic", "task.complete")
	assert.Contains(t, nextLine(t, lines, followWait), "TOPIC", "the table's header")
	assert.Contains(t, nextLine(t, lines, followWait), "box 1 checked: Add the flag")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 0, waitExit(t, cmd, lines, followWait))
}

// runMeasured runs a program to completion and returns its peak resident
// memory; exact is false when that figure is only an upper bound.
//
// The kernel's figure for a child (ru_maxrss from wait4) is not enough on
// its own: Go starts children with vfork, so until exec the child shares
// this test process's memory, and exec folds that memory's peak into the
// child's ru_maxrss. Every child would then seem to use at least what the
// test process does (a lot, under -race). GNU time forks a fresh, small
// process for the program and reports that one's peak, so it is used when
// it is installed.
func runMeasured(t testing.TB, dir string, stdout io.Writer, name string, args ...string) (rss int64, exact bool) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "maxrss")
	timeBin, err := exec.LookPath("/usr/bin/time")
	cmd := exec.Command(name, args...)
	if err == nil {
		cmd = exec.Command(timeBin, append([]string{"-f", "%M", "-o", report, name}, args...)...)
	}
	cmd.Dir = dir
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	if data, err := os.ReadFile(report); err == nil {
		if kb, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			return kb * 1024, true
		}
	}
	return childPeakRSS(t, cmd.ProcessState), false
}

// TestE2EEventsMemoryStaysFlat lists a log several times larger than the
// memory ralph may use: it must stream.
func TestE2EEventsMemoryStaysFlat(t *testing.T) {
	if raceBuild {
		t.Skip("ralph runs under the race detector here, which holds several times the memory ralph does; the end-to-end pass (make e2e) measures it")
	}
	if testing.Short() {
		t.Skip("writes a 53 MB log")
	}
	dir := t.TempDir()
	size := writeBigLog(t, dir, 300_000)
	// What ralph holds beyond its own start: the binary's pages and
	// runtime, which grow with its dependencies, are not the log's.
	const beyondStart = 16 << 20 // well under the log's size
	// On a machine starved of CPU the collector falls behind and the heap
	// grows past what is live (46 MB was seen). A soft limit makes it keep
	// up, so the peak measures what ralph holds: a ralph that read the
	// whole 53 MB log would still exceed the limit.
	t.Setenv("GOMEMLIMIT", "16MiB")
	ralph, err := shippedRalph()
	require.NoError(t, err)
	small := t.TempDir()
	writeBigLog(t, small, 10)
	var none countingWriter
	start, _ := runMeasured(t, small, &none, ralph, "events", "--last", "1")
	limit := start + beyondStart
	t.Logf("ralph events on a 10-line log: peak RSS %.1f MB", float64(start)/(1<<20))
	for _, args := range [][]string{
		{"events", "--topic", "build.done", "--json"},
		{"events"},
		{"events", "--hat", "reviewer", "--last", "1000"},
	} {
		var out countingWriter
		rss, exact := runMeasured(t, dir, &out, ralph, args...)
		t.Logf("ralph %s: %d lines out, peak RSS %.1f MB on a %.1f MB log", strings.Join(args, " "), out.lines, float64(rss)/(1<<20), float64(size)/(1<<20))
		assert.Positive(t, out.lines)
		if !exact {
			t.Skip("GNU time (/usr/bin/time) is not installed: a child's own peak memory cannot be told from this process's")
		}
		assert.Less(t, rss, limit, "ralph %v holds %d MB, %d MB more than on a 10-line log", args, rss>>20, (rss-start)>>20)
	}
}

// countingWriter counts the lines written to it and keeps none.
type countingWriter struct{ lines int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// writeBigLog writes a log of n lines shaped like a long run (see
// benchgen), names it the current run's, and returns its size.
func writeBigLog(t testing.TB, dir string, n int) int64 {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755))
	rel := filepath.Join(".ralph", "events-20261122-100000.jsonl")
	size, err := benchgen.WriteFile(filepath.Join(dir, rel), n)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".ralph", "current-events"), []byte(rel+"\n"), 0o644))
	return size
}

// Following before any run waits for one, then follows it to its end.
func TestEventsFollowWaitsForARun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())

	follow := exec.Command(ralphBin, "events", "-f", "--json")
	follow.Dir = w.dir
	stdout, err := follow.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedWriter{}
	follow.Stderr = stderr
	require.NoError(t, follow.Start())
	t.Cleanup(func() { _ = follow.Process.Kill(); _ = follow.Wait() })
	waitFor(t, "the follower to say it waits", func() bool { return strings.Contains(stderr.String(), "waiting for one to start") })

	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	out, err := io.ReadAll(stdout)
	require.NoError(t, err)
	require.NoError(t, follow.Wait(), stderr.String())
	topics := jsonTopics(t, string(out))
	require.NotEmpty(t, topics)
	assert.Equal(t, "loop.started", topics[0])
	assert.Equal(t, "loop.terminate", topics[len(topics)-1], "the follow ends with the run")
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain", "--untracked-files=all", ".ralph")), "the .ralph/ it made is ignored")
}
