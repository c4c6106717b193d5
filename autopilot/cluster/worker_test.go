package cluster_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// remoteRef is ref's commit on the remote at url, "" when there is none.
func remoteRef(t *testing.T, url, ref string) string {
	t.Helper()
	out := gittest.Run(t, t.TempDir(), "ls-remote", url, ref)
	if out == "" {
		return ""
	}
	return out[:40]
}

// workerFixture is what a worker test starts from: one server, a connection
// to it, the test's context, a shared remote with its base commit, and the
// results the workers publish.
func workerFixture(t *testing.T) (conn *cluster.Conn, ctx context.Context, url, base string, res <-chan cluster.Result) {
	t.Helper()
	conn = connect(t, start(t, 1).URLs())
	url, base = gittest.SharedRemote(t)
	return conn, testContext(t), url, base, results(t, conn)
}

// fakeLoop is a scripted `ralph loop`: each iteration commits a file and
// appends an agent's line and ralph's iteration.finished to the event log
// in the worktree's .ralph/, as a loop does.
type fakeLoop struct {
	job cluster.WorkerJob
	// start is the worktree's HEAD when the worker started the loop, read
	// before the loop's first commit can move it.
	start      string
	iterations int
	// gate, when set, holds each iteration until it receives.
	gate chan struct{}
	// stops ends an interrupted loop as a stop request does (reason
	// "stopped", exit 1) rather than as SIGINT does (exit 130).
	stops bool
	// dirty, when set, is a file an interrupted loop leaves uncommitted.
	dirty string

	mu          sync.Mutex
	commits     []string
	interrupted chan struct{}
	once        sync.Once
	done        chan autopilot.LoopResult
	res         autopilot.LoopResult
}

func (f *fakeLoop) Stop(runfiles.StopMode) { f.once.Do(func() { close(f.interrupted) }) }

func (f *fakeLoop) Wait() autopilot.LoopResult {
	r, ok := <-f.done
	if ok {
		f.res = r
	}
	return f.res
}

func (f *fakeLoop) Commits() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.commits...)
}

func (f *fakeLoop) log() string {
	return filepath.Join(f.job.Dir, ".ralph", "events-20260101-000000.jsonl")
}

func (f *fakeLoop) appendEvents(lines ...string) error {
	file, err := os.OpenFile(f.log(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	_, err = file.WriteString(strings.Join(lines, "\n") + "\n")
	return err
}

func git(dir string, args ...string) (string, error) { return gittest.Output(dir, args...) }

func (f *fakeLoop) run(name string) {
	defer close(f.done)
	fail := func(err error) { f.done <- autopilot.LoopResult{ExitCode: 3, Reason: "fatal", Message: err.Error()} }
	if err := os.MkdirAll(filepath.Join(f.job.Dir, ".ralph"), 0o755); err != nil {
		fail(err)
		return
	}
	if err := os.WriteFile(filepath.Join(f.job.Dir, ".ralph", "current-events"), []byte(".ralph/events-20260101-000000.jsonl\n"), 0o644); err != nil {
		fail(err)
		return
	}
	if err := f.appendEvents(`{"ts":"2026-01-01T00:00:00Z","topic":"loop.started","payload":null,"source":"ralph"}`); err != nil {
		fail(err)
		return
	}
	for i := 1; i <= f.iterations; i++ {
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-f.interrupted:
				f.done <- f.interruptedResult()
				return
			}
		}
		file := fmt.Sprintf("%s-%d.txt", name, i)
		if err := os.WriteFile(filepath.Join(f.job.Dir, file), []byte("work\n"), 0o644); err != nil {
			fail(err)
			return
		}
		if _, err := git(f.job.Dir, "add", file); err != nil {
			fail(err)
			return
		}
		if _, err := git(f.job.Dir, "commit", "-q", "-m", file); err != nil {
			fail(err)
			return
		}
		head, err := git(f.job.Dir, "rev-parse", "HEAD")
		if err != nil {
			fail(err)
			return
		}
		f.mu.Lock()
		f.commits = append(f.commits, head)
		f.mu.Unlock()
		err = f.appendEvents(
			fmt.Sprintf(`{"ts":"2026-01-01T00:00:0%dZ","topic":"work.done","payload":"%s","iteration":%d,"source":"agent"}`, i, file, i),
			fmt.Sprintf(`{"ts":"2026-01-01T00:00:0%dZ","topic":"iteration.finished","payload":{"iteration":%d,"outcome":"success"},"iteration":%d,"source":"ralph"}`, i, i, i))
		if err != nil {
			fail(err)
			return
		}
		select {
		case <-f.interrupted:
			f.done <- f.interruptedResult()
			return
		default:
		}
	}
	if err := f.appendEvents(`{"ts":"2026-01-01T00:01:00Z","topic":"loop.terminate","payload":{"reason":"completed"},"source":"ralph"}`); err != nil {
		fail(err)
		return
	}
	f.done <- autopilot.LoopResult{ExitCode: 0, Reason: "completed", Message: "the objective is met"}
}

// interruptedResult leaves the loop's dirty file and says how an
// interrupted loop ended.
func (f *fakeLoop) interruptedResult() autopilot.LoopResult {
	if f.dirty != "" {
		if err := os.WriteFile(filepath.Join(f.job.Dir, f.dirty), []byte("half done\n"), 0o644); err != nil {
			return autopilot.LoopResult{ExitCode: 3, Reason: "fatal", Message: err.Error()}
		}
	}
	if f.stops {
		return autopilot.LoopResult{ExitCode: 1, Reason: "stopped", Message: "a stop request asked the loop to stop"}
	}
	return autopilot.LoopResult{ExitCode: 130, Reason: "interrupted", Message: "interrupted"}
}

// fakeRunner starts fake loops and hands each to the test.
type fakeRunner struct {
	name       string
	iterations int
	gate       chan struct{}
	stops      bool
	dirty      string
	started    chan *fakeLoop
}

func newFakeRunner(name string, iterations int, gate chan struct{}) *fakeRunner {
	return &fakeRunner{name: name, iterations: iterations, gate: gate, started: make(chan *fakeLoop, 16)}
}

func (r *fakeRunner) Run(_ context.Context, job cluster.WorkerJob) (cluster.WorkerLoop, error) {
	for _, f := range append([]string{job.ObjectiveFile}, job.ConfigFiles...) {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
		if strings.HasPrefix(f, job.Dir+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s is inside the worktree", f)
		}
	}
	start, err := git(job.Dir, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	f := &fakeLoop{job: job, start: start, iterations: r.iterations, gate: r.gate, stops: r.stops, dirty: r.dirty,
		interrupted: make(chan struct{}), done: make(chan autopilot.LoopResult, 1)}
	name := r.name
	if name == "" {
		name = job.TaskID // a file of its own per task, so tasks merge cleanly
	}
	go f.run(name)
	r.started <- f
	return f, nil
}

type workerSetup struct {
	conn      *cluster.Conn
	ackWait   time.Duration
	url       string
	host      string
	runner    *fakeRunner
	validate  func([]cluster.ConfigFile) error
	keepAlive time.Duration
	batch     int
	trust     bool
	run       func(context.Context, cluster.WorkerJob) (cluster.WorkerLoop, error)
	// dir is the worker's checkouts, a new directory if empty.
	dir string
	// logs, when set, gets the worker's log lines too.
	logs *logLines
	// redactor hides the worker's secrets; nil hides nothing.
	redactor *redact.Redactor
}

// logLines are a worker's log lines, for a test to wait on.
type logLines struct {
	mu    sync.Mutex
	lines []string
	news  chan struct{}
}

func newLogLines() *logLines { return &logLines{news: make(chan struct{}, 1)} }

func (l *logLines) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	select {
	case l.news <- struct{}{}:
	default:
	}
}

// count is how many lines contain all of parts.
func (l *logLines) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// waitFor waits until n lines contain all of parts, and returns the last.
func (l *logLines) waitFor(t *testing.T, n int, parts ...string) {
	t.Helper()
	deadline := time.After(long)
	for l.count(parts...) < n {
		select {
		case <-l.news:
		case <-deadline:
			require.FailNow(t, "no such log line", "%d lines with %q", n, parts)
		}
	}
}

// startWorker runs a worker until the returned cancel is called; wait
// returns once its Run has.
func startWorker(t *testing.T, s workerSetup) (cancel func(), wait func() error) {
	_, cancel, wait = startWorkerHandle(t, s)
	return cancel, wait
}

// startWorkerHandle is startWorker that also returns the Worker.
func startWorkerHandle(t *testing.T, s workerSetup) (w *cluster.Worker, cancel func(), wait func() error) {
	t.Helper()
	run := s.run
	if run == nil {
		run = s.runner.Run
	}
	allow := []string{s.url}
	if s.url == "" {
		allow = nil // a worker that allows no repository
	}
	logf := func(msg string) {
		t.Logf("%s: %s", s.host, msg)
		if s.logs != nil {
			s.logs.add(msg)
		}
	}
	cl, err := cluster.NewClaimer(testContext(t), s.conn.JetStream(), cluster.ClaimerOptions{AckWait: s.ackWait, Trust: coordinatorTrust,
		Invalid: func(subject string, err error) { logf(fmt.Sprintf("dropped the task message on %s: %v", subject, err)) }})
	require.NoError(t, err)
	w, err = cluster.NewWorker(cluster.WorkerOptions{
		JetStream:         s.conn.JetStream(),
		Signer:            workerKey,
		Claimer:           cl,
		Checkouts:         cluster.Checkouts{Dir: cmp.Or(s.dir, t.TempDir()), Allow: allow},
		Slots:             2,
		Host:              s.host,
		Run:               run,
		Validate:          s.validate,
		TrustTaskCommands: s.trust,
		KeepAlive:         s.keepAlive,
		BatchBytes:        s.batch,
		Poll:              50 * time.Millisecond,
		RefusalDelay:      time.Millisecond,
		Logger:            cluster.LogTo(logf),
		Redactor:          s.redactor,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(testContext(t))
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	var once sync.Once
	var runErr error
	wait = func() error {
		once.Do(func() {
			select {
			case runErr = <-errc:
			case <-time.After(long):
				runErr = errors.New("the worker did not return")
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		cancel()
		_ = wait()
	})
	return w, cancel, wait
}

// results collects the results published, as the coordinator reads them.
func results(t *testing.T, conn *cluster.Conn) <-chan cluster.Result {
	t.Helper()
	ch := make(chan cluster.Result, 16)
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cluster.Results(ctx, conn.JetStream(), cluster.ConsumeOptions{Trust: workerTrust}, func(_ context.Context, r cluster.Result) error {
			ch <- r
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

func nextResult(t *testing.T, ch <-chan cluster.Result) cluster.Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(long):
		require.FailNow(t, "no result")
		return cluster.Result{}
	}
}

func streamMsgs(t *testing.T, conn *cluster.Conn, stream string) uint64 {
	t.Helper()
	s, err := conn.JetStream().Stream(testContext(t), stream)
	require.NoError(t, err)
	info, err := s.Info(testContext(t))
	require.NoError(t, err)
	return info.State.Msgs
}

// eventsCopy keeps the coordinator's copy of each task's events, appending
// a batch at its offset as the coordinator does.
type eventsCopy struct {
	mu      sync.Mutex
	logs    map[string][]byte
	batches map[string][]cluster.Events
}

func followEvents(t *testing.T, conn *cluster.Conn) *eventsCopy {
	t.Helper()
	c := &eventsCopy{logs: map[string][]byte{}, batches: map[string][]cluster.Events{}}
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cluster.EventsOf(ctx, conn.JetStream(), cluster.ConsumeOptions{Trust: workerTrust}, func(_ context.Context, e cluster.Events) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.batches[e.TaskID] = append(c.batches[e.TaskID], e)
			have := int64(len(c.logs[e.TaskID]))
			switch {
			case e.Offset+int64(len(e.Lines)) <= have:
				return nil // had it
			case e.Offset != have:
				return fmt.Errorf("batch at %d, but the copy has %d bytes", e.Offset, have)
			}
			c.logs[e.TaskID] = append(c.logs[e.TaskID], e.Lines...)
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

func (c *eventsCopy) log(id string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.logs[id]...)
}

func (c *eventsCopy) waitFor(t *testing.T, id string, want []byte) {
	t.Helper()
	require.Eventually(t, func() bool { return bytes.Equal(c.log(id), want) }, long, 20*time.Millisecond,
		"the coordinator's copy of %s's events", id)
}

func workerTask(id, url, base string) cluster.Task {
	return cluster.Task{Run: run, ID: id, Attempt: 1, Objective: "do " + id, RepoURL: url, BaseCommit: base, Configs: loopConfig}
}

func nextLoop(t *testing.T, r *fakeRunner) *fakeLoop {
	t.Helper()
	select {
	case f := <-r.started:
		return f
	case <-time.After(long):
		require.FailNow(t, "no loop started")
		return nil
	}
}

// A task runs: its work in progress is pushed after each iteration, its
// branch with the loop's commits is pushed, its result published once and
// its claim acknowledged, and its events reach the coordinator exactly.
func TestWorkerRunsATask(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	evs := followEvents(t, conn)
	gate := make(chan struct{})
	runner := newFakeRunner("w1", 3, gate)
	// Batches of about two lines, so that iterations' lines are cut in
	// several.
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: runner, batch: 300})

	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	loop := nextLoop(t, runner)
	assert.False(t, loop.job.Continued)
	assert.Equal(t, "do t-1", string(must(os.ReadFile(loop.job.ObjectiveFile))))
	// The loop's mark is recorded beside its job before it starts, with
	// the worker that started it, until the loop has ended.
	record := filepath.Join(filepath.Dir(loop.job.ObjectiveFile), "loop.json")
	var rec struct {
		Mark      string `json:"mark"`
		WorkerPID int    `json:"worker_pid"`
	}
	require.NoError(t, json.Unmarshal(must(os.ReadFile(record)), &rec))
	assert.Len(t, loop.job.Mark, 24)
	assert.Equal(t, string(loop.job.Mark), rec.Mark)
	assert.Equal(t, os.Getpid(), rec.WorkerPID)
	require.Len(t, loop.job.ConfigFiles, 1)
	assert.Contains(t, string(must(os.ReadFile(loop.job.ConfigFiles[0]))), "max_iterations: 3", "the task's config")
	assert.Equal(t, base, loop.start)
	assert.Equal(t, os.FileMode(0o700), must(os.Stat(filepath.Dir(loop.job.Output))).Mode().Perm(),
		"the task's files, and the loop's output, are the worker's user's alone")

	for i := range 3 {
		gate <- struct{}{}
		require.Eventually(t, func() bool { return len(loop.Commits()) == i+1 }, long, 10*time.Millisecond)
		want := loop.Commits()[i]
		require.Eventually(t, func() bool { return remoteRef(t, url, cluster.WIPRef("t-1")) == want }, long, 20*time.Millisecond,
			"work in progress after iteration %d", i+1)
	}

	r := nextResult(t, res)
	commits := loop.Commits()
	assert.Equal(t, cluster.Result{Run: run, TaskID: "t-1", Attempt: 1, Worker: "host-1", Branch: "ralph/t-1", Head: commits[2],
		ExitCode: 0, Reason: "completed", Message: "the objective is met"}, r)
	assert.Equal(t, commits[2], remoteRef(t, url, "refs/heads/ralph/t-1"))
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond, "the claim is acknowledged")
	assert.EqualValues(t, 1, streamMsgs(t, conn, cluster.ResultsStream), "one result")
	assert.NoFileExists(t, record, "the loop has ended: nothing of it is left to stop")

	evs.waitFor(t, "t-1", must(os.ReadFile(loop.log())))
	evs.mu.Lock()
	defer evs.mu.Unlock()
	var off int64
	assert.Greater(t, len(evs.batches["t-1"]), 3)
	for _, b := range evs.batches["t-1"] {
		assert.LessOrEqual(t, len(b.Lines), 300)
		assert.Equal(t, off, b.Offset, "batches in order, each where the last ended")
		assert.Equal(t, "host-1", b.Worker)
		off += int64(len(b.Lines))
	}
}

// A worker whose context ends mid-task interrupts the loop, pushes its work
// in progress and hands the task back; another worker continues from that
// work at once, long before the claim's ack wait, and the coordinator's
// copy of the events goes on from where the first worker's ended.
func TestWorkerHandsBackAndAnotherContinues(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	evs := followEvents(t, conn)
	// An ack wait longer than the test's bound: only a release lets the
	// second worker have the task in time.
	const ackWait = 10 * time.Minute

	gate := make(chan struct{})
	first := newFakeRunner("a", 3, gate)
	cancelFirst, waitFirst := startWorker(t, workerSetup{conn: conn, ackWait: ackWait, url: url, host: "host-a", runner: first})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	loopA := nextLoop(t, first)
	gate <- struct{}{}
	require.Eventually(t, func() bool { return len(loopA.Commits()) == 1 }, long, 10*time.Millisecond)
	wip := loopA.Commits()[0]
	require.Eventually(t, func() bool { return remoteRef(t, url, cluster.WIPRef("t-1")) == wip }, long, 20*time.Millisecond)
	logA := must(os.ReadFile(loopA.log()))
	evs.waitFor(t, "t-1", logA)

	began := time.Now()
	cancelFirst()
	require.ErrorIs(t, waitFirst(), context.Canceled)
	select {
	case <-loopA.interrupted:
	default:
		t.Fatal("the first worker did not interrupt its loop")
	}
	assert.Equal(t, wip, remoteRef(t, url, cluster.WIPRef("t-1")))
	assert.EqualValues(t, 1, queued(t, conn), "the task is back in the queue")

	second := newFakeRunner("b", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: ackWait, url: url, host: "host-b", runner: second})
	loopB := nextLoop(t, second)
	assert.True(t, loopB.job.Continued)
	assert.Equal(t, wip, loopB.start)

	r := nextResult(t, res)
	assert.Less(t, time.Since(began), ackWait)
	assert.Equal(t, "host-b", r.Worker)
	assert.Equal(t, 0, r.ExitCode)
	require.Len(t, loopB.Commits(), 1)
	assert.Equal(t, loopB.Commits()[0], r.Head)
	assert.Equal(t, wip, gittest.Run(t, loopB.job.Dir, "rev-parse", r.Head+"^"), "the second worker's commit is on the first's")
	assert.Equal(t, r.Head, remoteRef(t, url, "refs/heads/ralph/t-1"))
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond)
	assert.EqualValues(t, 1, streamMsgs(t, conn, cluster.ResultsStream))

	evs.waitFor(t, "t-1", append(logA, must(os.ReadFile(loopB.log()))...))
}

// A task the worker refuses, for a repository outside its allow list or a
// config its validator refuses, is failed with the reason, and not run or
// retried.
func TestWorkerRefusesTasks(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	url, base := gittest.SharedRemote(t)
	otherURL, otherBase := gittest.SharedRemote(t)
	res := results(t, conn)
	runner := newFakeRunner("w", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: runner})

	// A repository outside its allow list is the worker's reason, not the
	// task's: it hands the task back, reporting each refusal, until no
	// worker took it in 10 deliveries.
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("elsewhere", otherURL, otherBase)))
	for delivery := 1; delivery < 10; delivery++ {
		r := nextResult(t, res)
		assert.True(t, r.Refused, "delivery %d is handed back", delivery)
		assert.Equal(t, delivery, r.Delivery)
		assert.Contains(t, r.Message, "repository not in this worker's allow list")
	}
	r := nextResult(t, res)
	assert.Equal(t, "elsewhere", r.TaskID)
	assert.False(t, r.Refused)
	assert.Equal(t, 3, r.ExitCode)
	assert.Contains(t, r.Message, "no worker would run it: delivered 10 times")
	assert.Contains(t, r.Message, "repository not in this worker's allow list")
	assert.Contains(t, r.Message, otherURL)
	assert.Empty(t, r.Branch)

	bad := workerTask("bad-config", url, base)
	bad.Configs = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte("event_loop:\n  max_iterations: 3\nbogus: 1\n")}}
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, bad))
	r = nextResult(t, res)
	assert.Equal(t, "bad-config", r.TaskID)
	assert.Equal(t, 3, r.ExitCode)
	assert.Contains(t, r.Message, `unknown key "bogus"`)
	assert.Contains(t, r.Message, "ralph.yml:3", "the refusal names the file and line")

	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond, "refused tasks leave the queue")
	// A good task after them runs: by then the refused ones would have come
	// again, had they not been acknowledged.
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("good", url, base)))
	r = nextResult(t, res)
	assert.Equal(t, "good", r.TaskID)
	assert.Equal(t, 0, r.ExitCode)
	assert.EqualValues(t, 12, streamMsgs(t, conn, cluster.ResultsStream), "9 refusals and 3 results")
	assert.Len(t, runner.started, 1, "only the good task ran")
	assert.Empty(t, remoteRef(t, otherURL, "refs/heads/ralph/elsewhere"))
}

// A worker that may not run a task's repository hands it back, and a
// worker that may runs it.
func TestAMisconfiguredWorkerHandsTasksToAnother(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	url, base := gittest.SharedRemote(t)
	res := results(t, conn)
	stop, stopped := startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, host: "misconfigured", runner: newFakeRunner("m", 1, nil)})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	r := nextResult(t, res)
	require.True(t, r.Refused)
	assert.Equal(t, "misconfigured", r.Worker)
	stop()
	require.ErrorIs(t, stopped(), context.Canceled)

	runner := newFakeRunner("w", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "good", runner: runner})
	for r = nextResult(t, res); r.Refused; r = nextResult(t, res) {
		assert.Equal(t, "misconfigured", r.Worker, "only the misconfigured worker refuses")
	}
	assert.Equal(t, "good", r.Worker)
	assert.Equal(t, 0, r.ExitCode, r.Message)
	assert.Len(t, runner.started, 1)
}

// A claim is kept alive while its loop runs, past the ack wait: the task
// is not given to another slot meanwhile.
func TestWorkerKeepsItsClaimAlive(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	const ackWait = 3 * time.Second
	gate := make(chan struct{})
	runner := newFakeRunner("w", 1, gate)
	startWorker(t, workerSetup{conn: conn, ackWait: ackWait, url: url, host: "host-1", runner: runner, keepAlive: 200 * time.Millisecond})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	loop := nextLoop(t, runner)

	// Twice the ack wait: without InProgress the task would have been
	// delivered again, to the worker's other slot.
	time.Sleep(2 * ackWait)
	cons, err := conn.JetStream().Consumer(ctx, cluster.TasksStream, cluster.WorkersConsumer)
	require.NoError(t, err)
	info, err := cons.Info(ctx)
	require.NoError(t, err)
	assert.Zero(t, info.NumRedelivered)
	assert.Empty(t, runner.started, "no second loop of the task")

	gate <- struct{}{}
	r := nextResult(t, res)
	assert.Equal(t, 0, r.ExitCode)
	assert.Equal(t, loop.Commits()[0], r.Head)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A worker runs a task's loop with the agent the task names, and fails,
// unrun, a task whose agent a coordinator should never have sent: the
// message is checked here as the coordinator checked the tracker.
func TestWorkerRunsATaskWithTheAgentItNames(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	runner := newFakeRunner("", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: runner})

	hostile := workerTask("hostile", url, base)
	hostile.Model = "--dangerously-skip-permissions"
	require.NoError(t, cluster.PublishUncheckedTask(ctx, conn.JetStream(), coordinatorKey, hostile))
	r := nextResult(t, res)
	assert.Equal(t, "hostile", r.TaskID)
	assert.Equal(t, 3, r.ExitCode)
	assert.Contains(t, r.Message, `model "--dangerously-skip-permissions" starts with "-"`)

	named := workerTask("named", url, base)
	named.Backend, named.Model = "codex", "gpt-5"
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, named))
	loop := nextLoop(t, runner)
	assert.Equal(t, "named", loop.job.TaskID, "the hostile task never ran")
	assert.Equal(t, autopilot.Agent{Backend: "codex", Model: "gpt-5"}, loop.job.Agent)
	r = nextResult(t, res)
	assert.Equal(t, "named", r.TaskID)
	assert.Equal(t, 0, r.ExitCode)
}
