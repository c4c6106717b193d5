package cluster_test

import (
	"context"
	"encoding/json"
	"github.com/ralph-loop/ralph/runfiles"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/natstest"
)

// stored is the message of the last task published for id, as anyone who
// can read the stream may copy it, without its message id.
func stored(t *testing.T, conn *cluster.Conn, id string) (*nats.Msg, uint64) {
	t.Helper()
	s, err := conn.JetStream().Stream(testContext(t), cluster.TasksStream)
	require.NoError(t, err)
	raw, err := s.GetLastMsgForSubject(testContext(t), cluster.TaskSubject(id))
	require.NoError(t, err)
	h := nats.Header{}
	for k, v := range raw.Header {
		if k != jetstream.MsgIDHeader {
			h[k] = v
		}
	}
	return &nats.Msg{Subject: raw.Subject, Data: raw.Data, Header: h}, raw.Sequence
}

// resend publishes msg again as a new message, with id as its message id.
func resend(t *testing.T, conn *cluster.Conn, msg *nats.Msg, id string) {
	t.Helper()
	_, err := conn.JetStream().PublishMsg(testContext(t), msg, jetstream.WithMsgID(id))
	require.NoError(t, err)
}

// A task message that is not signed, or whose signature does not verify
// (its content was changed after a coordinator signed it), is removed from
// the queue, logged, and runs nothing; a signed task after them runs.
func TestWorkerDropsUnsignedAndAlteredTasks(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	js := conn.JetStream()

	forged, err := json.Marshal(workerTask("forged", url, base))
	require.NoError(t, err)
	_, err = js.Publish(ctx, cluster.TaskSubject("forged"), forged)
	require.NoError(t, err)

	require.NoError(t, cluster.PublishTask(ctx, js, coordinatorKey, workerTask("altered", url, base)))
	msg, seq := stored(t, conn, "altered")
	s, err := js.Stream(ctx, cluster.TasksStream)
	require.NoError(t, err)
	require.NoError(t, s.DeleteMsg(ctx, seq))
	msg.Data = []byte(strings.Replace(string(msg.Data), `"objective":"do altered"`, `"objective":"do something else"`, 1))
	require.Contains(t, string(msg.Data), "something else")
	resend(t, conn, msg, "altered-again")

	require.NoError(t, cluster.PublishTask(ctx, js, coordinatorKey, workerTask("good", url, base)))

	logs := newLogLines()
	runner := newFakeRunner("", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: runner, logs: logs})
	r := nextResult(t, res)
	assert.Equal(t, "good", r.TaskID)
	assert.Equal(t, 0, r.ExitCode)
	logs.waitFor(t, 1, "dropped the task message on "+cluster.TaskSubject("forged"), "it is not signed")
	logs.waitFor(t, 1, "dropped the task message on "+cluster.TaskSubject("altered"), "its signature does not verify")
	assert.Equal(t, "good", nextLoop(t, runner).job.TaskID)
	assert.Empty(t, runner.started, "nothing else ran")
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond, "dropped from the queue")
	assert.EqualValues(t, 1, streamMsgs(t, conn, cluster.ResultsStream), "no result for what was dropped")
}

// A task signed by a key this worker does not trust runs nothing: it is
// handed back for a worker that may trust the key, each refusal reported,
// and dropped without a result after ten deliveries.
func TestWorkerRefusesTasksSignedByAnUntrustedKey(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	stranger := newSigner()
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), stranger, workerTask("stranger", url, base)))
	logs := newLogLines()
	runner := newFakeRunner("", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: runner, logs: logs})

	for delivery := 1; delivery < 10; delivery++ {
		r := nextResult(t, res)
		assert.True(t, r.Refused, "delivery %d is handed back", delivery)
		assert.Contains(t, r.Message, "it is signed by "+stranger.PublicKey()+", which is not a coordinator key this side trusts")
	}
	logs.waitFor(t, 1, "dropped a task message on "+cluster.TaskSubject("stranger"), "delivered 10 times",
		"--trust-coordinator "+stranger.PublicKey())
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond, "dropped from the queue")
	assert.Empty(t, runner.started, "nothing ran")
	assert.EqualValues(t, 9, streamMsgs(t, conn, cluster.ResultsStream), "nine refusals, no result")
}

// A signed task sent again as a new message, as anyone who copied it from
// the stream can, is not run again: not by the worker that ran it, nor
// by that worker restarted on its directory.
func TestWorkerRunsAReplayedTaskOnce(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	msg, _ := stored(t, conn, "t-1")
	dir := t.TempDir()

	logs := newLogLines()
	runner := newFakeRunner("", 1, nil)
	stop, stopped := startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: runner, dir: dir, logs: logs})
	r := nextResult(t, res)
	require.Equal(t, 0, r.ExitCode, r.Message)
	nextLoop(t, runner)
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond)

	resend(t, conn, msg, "replay-1")
	logs.waitFor(t, 1, "dropped task t-1", "a task is run once, a replay never")
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond)
	stop()
	require.ErrorIs(t, stopped(), context.Canceled)

	restarted := newLogLines()
	again := newFakeRunner("", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", runner: again, dir: dir, logs: restarted})
	resend(t, conn, msg, "replay-2")
	restarted.waitFor(t, 1, "dropped task t-1", "a task is run once, a replay never")
	require.Eventually(t, func() bool { return queued(t, conn) == 0 }, long, 20*time.Millisecond)

	assert.Empty(t, runner.started, "the worker ran the task once")
	assert.Empty(t, again.started, "the restarted worker did not run it")
	assert.EqualValues(t, 1, streamMsgs(t, conn, cluster.ResultsStream), "one result")
}

// A worker restarted on its directory takes the task it handed back on
// again, the same message: that is the task going on, not a replay.
func TestWorkerRestartedOnItsDirectoryContinuesItsTask(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	dir := t.TempDir()
	gate := make(chan struct{})
	first := newFakeRunner("a", 2, gate)
	stop, stopped := startWorker(t, workerSetup{conn: conn, ackWait: 10 * time.Minute, url: url, host: "host-1", runner: first, dir: dir})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	loop := nextLoop(t, first)
	gate <- struct{}{}
	require.Eventually(t, func() bool { return len(loop.Commits()) == 1 }, long, 10*time.Millisecond)
	wip := loop.Commits()[0]
	require.Eventually(t, func() bool { return remoteRef(t, url, cluster.WIPRef("t-1")) == wip }, long, 20*time.Millisecond)
	stop()
	require.ErrorIs(t, stopped(), context.Canceled)

	second := newFakeRunner("b", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 10 * time.Minute, url: url, host: "host-1", runner: second, dir: dir})
	continued := nextLoop(t, second)
	assert.True(t, continued.job.Continued)
	assert.Equal(t, wip, continued.start)
	r := nextResult(t, res)
	assert.Equal(t, 0, r.ExitCode, r.Message)
	assert.Equal(t, continued.Commits()[0], r.Head)
}

// A result or an event batch that no trusted worker signed is dropped and
// logged: the task waits for its real result, and the worker that did the
// work is the one whose work is merged.
func TestCoordinatorDropsForgedResultsAndEvents(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	js := conn.JetStream()
	url, _ := gittest.SharedRemote(t)
	repo := coordinatorRepo(t, url, "a")
	logs := newLogLines()
	run := runCoordinatorLogged(testContext(t), t, conn, repo, url, 1, logs)

	require.Eventually(t, func() bool { return queued(t, conn) == 1 }, long, 20*time.Millisecond, "the task is sent")
	msg, _ := stored(t, conn, "a")
	var sent cluster.Task
	require.NoError(t, json.Unmarshal(msg.Data, &sent))
	forged := cluster.Result{Run: sent.Run, TaskID: "a", Attempt: sent.Attempt, Worker: "forger", ExitCode: 0, Reason: "completed"}
	data, err := json.Marshal(forged)
	require.NoError(t, err)
	_, err = js.Publish(ctx, cluster.ResultSubject("a"), data)
	require.NoError(t, err)
	stranger := newSigner()
	forged.Worker = "stranger"
	require.NoError(t, cluster.PublishResult(ctx, js, stranger, forged))
	batch, err := json.Marshal(cluster.Events{Run: sent.Run, TaskID: "a", Attempt: sent.Attempt, Worker: "forger",
		Lines: []byte(`{"topic":"injected","payload":"x","source":"agent"}` + "\n")})
	require.NoError(t, err)
	_, err = js.Publish(ctx, cluster.EventsSubject("a"), batch)
	require.NoError(t, err)

	logs.waitFor(t, 1, "dropped a message on "+cluster.ResultSubject("a"), "it is not signed")
	logs.waitFor(t, 1, "dropped a message on "+cluster.ResultSubject("a"), "signed by "+stranger.PublicKey(), "not a worker key")
	logs.waitFor(t, 1, "dropped a message on "+cluster.EventsSubject("a"), "it is not signed")

	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "w1", runner: newFakeRunner("", 1, nil)})
	res := run.wait(t)
	assert.Equal(t, autopilot.Result{ExitCode: 0, Completed: 1}, res)
	assert.FileExists(t, filepath.Join(repo, "a-1.txt"), "the worker's work is merged")
	info, err := runfiles.ReadWorkerInfo(repo, "a")
	require.NoError(t, err)
	assert.Equal(t, "w1", info.Worker)
	events, err := os.ReadFile(runfiles.In(repo).RemoteEvents("a"))
	require.NoError(t, err)
	assert.NotContains(t, string(events), "injected")
	assert.True(t, strings.HasPrefix(string(events), `{"ts":"2026-01-01T00:00:00Z","topic":"loop.started"`), "the copy starts with the worker's loop:\n%s", events)
	assert.Contains(t, string(events), `"topic":"loop.terminate"`, "and has all of it")
}

func TestCheckCredentials(t *testing.T) {
	for _, urls := range []string{
		"nats://127.0.0.1:4222", "nats://localhost:4222", "nats://[::1]:4222", "127.0.0.1:4222",
		"nats://127.0.0.1:4222,nats://127.0.0.2:4222",
		"nats://ralph:secret@h1:4222", "tls://token@h1.example.com:4222",
	} {
		assert.NoError(t, cluster.CheckCredentials(cluster.Options{URLs: []string{urls}}), urls)
	}
	for _, urls := range []string{"nats://h1:4222", "nats://10.0.0.7:4222", "tls://nats.example.com", "h1:4222",
		"nats://127.0.0.1:4222,nats://h2:4222", "nats://0.0.0.0:4222"} {
		err := cluster.CheckCredentials(cluster.Options{URLs: []string{urls}})
		require.Error(t, err, urls)
		assert.Contains(t, err.Error(), "is not on this machine, and ralph has no credentials for it", urls)
		var setup *cluster.SetupError
		require.ErrorAs(t, err, &setup)
		assert.Contains(t, setup.Hint(), "--creds FILE")
		assert.Contains(t, setup.Hint(), "nats://ralph:PASSWORD@host:4222")
		assert.NoError(t, cluster.CheckCredentials(cluster.Options{URLs: []string{urls}, CredsFile: "x.creds"}))
		assert.NoError(t, cluster.CheckCredentials(cluster.Options{URLs: []string{urls}, NKeyFile: "x.nk"}))
	}
}

// A worker's or a coordinator's key authenticates it to servers whose
// authorization lists the key's public half.
func TestConnectWithNKey(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "worker.nk")
	_, err := cluster.WriteNewSeed(seed)
	require.NoError(t, err)
	signer, err := cluster.ReadSigner(seed)
	require.NoError(t, err)
	kp := signerKeyPair(t, seed)
	require.Equal(t, signer.PublicKey(), must(kp.PublicKey()))
	c := natstest.StartCluster(t, 1, natstest.WithNKey(kp))

	_, err = cluster.Connect(t.Context(), cluster.Options{URLs: []string{c.URL(0)}})
	require.ErrorContains(t, err, "uthorization")
	conn, err := cluster.Connect(t.Context(), cluster.Options{URLs: []string{c.URL(0)}, NKeyFile: seed})
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, cluster.EnsureStreams(testContext(t), conn.JetStream(), 1))
}

// A worker lays its own config files and --backend over each task's
// config: they name the agent its loops run.
func TestWorkerLaysItsOwnConfigOverTheTasks(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	own := filepath.Join(t.TempDir(), "worker.yml")
	require.NoError(t, os.WriteFile(own, []byte("cli:\n  backend: claude\n  model: sonnet\n"), 0o644))
	runner := newFakeRunner("", 1, nil)
	w, err := cluster.NewWorker(cluster.WorkerOptions{JetStream: conn.JetStream(), Signer: workerKey, Claimer: claimer(t, conn, 0),
		Checkouts: cluster.Checkouts{Dir: t.TempDir(), Allow: []string{url}}, Slots: 1, Host: "host-1", Run: runner.Run,
		Configs: []string{own}, Backend: "codex"})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.ErrorIs(t, w.Run(wctx), context.Canceled)
	}()
	t.Cleanup(func() { stop(); <-done })

	task := workerTask("t-1", url, base)
	task.Configs = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte("cli:\n  backend: command\n  command: /bin/agent\nevent_loop:\n  max_iterations: 3\n")}}
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, task))
	loop := nextLoop(t, runner)
	require.Len(t, loop.job.ConfigFiles, 3)
	assert.Equal(t, own, loop.job.ConfigFiles[1], "the worker's own file, read where it is")
	cfg, err := config.Load(loop.job.ConfigFiles...)
	require.NoError(t, err)
	assert.Equal(t, config.CLI{Backend: "codex", Model: "sonnet"}, cfg.CLI, "--backend over -c over the task's, whose agent is dropped")
	assert.Equal(t, 3, cfg.EventLoop.MaxIterations)
	assert.Equal(t, 0, nextResult(t, res).ExitCode)

	_, err = cluster.NewWorker(cluster.WorkerOptions{JetStream: conn.JetStream(), Signer: workerKey, Claimer: claimer(t, conn, 0),
		Checkouts: cluster.Checkouts{Dir: t.TempDir()}, Slots: 1, Host: "h", Run: runner.Run, Backend: "cladue"})
	require.ErrorContains(t, err, `did you mean "claude"?`)
}

// A server's password given in its URL is the cluster's credential: an
// error that names the server does not print it.
func TestAConnectionErrorHidesTheURLsPassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	_, err = cluster.Connect(t.Context(), cluster.Options{URLs: []string{"nats://ralph:s3cret-nats-pw@" + addr}})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret-nats-pw")
	assert.Contains(t, err.Error(), "nats://ralph:xxxxx@"+addr)
}
