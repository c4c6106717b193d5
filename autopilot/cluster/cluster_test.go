package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/natstest"
)

// long bounds what should take a moment on an idle machine; CI machines
// are busy.
const long = 90 * time.Second

const commit = "0123456789abcdef0123456789abcdef01234567"

// The tests' keys: the coordinator signs tasks, which the workers trust;
// the workers sign results and events, which the coordinator trusts.
var (
	coordinatorKey   = newSigner()
	workerKey        = newSigner()
	coordinatorTrust = mustKeyring(cluster.RoleCoordinator, coordinatorKey)
	workerTrust      = mustKeyring(cluster.RoleWorker, workerKey)
)

func newSigner() *cluster.Signer {
	kp, err := nkeys.CreateUser()
	if err != nil {
		panic(err)
	}
	s, err := cluster.NewSigner(kp)
	if err != nil {
		panic(err)
	}
	return s
}

func mustKeyring(role string, signers ...*cluster.Signer) *cluster.Keyring {
	var keys []string
	for _, s := range signers {
		keys = append(keys, s.PublicKey())
	}
	k, err := cluster.NewKeyring(role, keys...)
	if err != nil {
		panic(err)
	}
	return k
}

// run is the autopilot run the tests' messages belong to.
const run = "20261125-100000"

var loopConfig = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte("event_loop:\n  max_iterations: 3\n")}}

func task(id string, attempt int) cluster.Task {
	return cluster.Task{
		Run:        run,
		ID:         id,
		Attempt:    attempt,
		Objective:  "do " + id,
		RepoURL:    "https://example.com/repo.git",
		BaseCommit: commit,
		Configs:    loopConfig,
	}
}

func result(id string, attempt int, worker string) cluster.Result {
	return cluster.Result{Run: run, TaskID: id, Attempt: attempt, Worker: worker, Branch: "ralph/" + id, Head: commit}
}

// start starts n servers with ralph's streams replicated on all of them.
func start(t *testing.T, n int) *natstest.Cluster {
	t.Helper()
	c := natstest.StartCluster(t, n)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	require.NoError(t, cluster.EnsureStreams(ctx, conn.JetStream(), n))
	// Again: it is idempotent.
	require.NoError(t, cluster.EnsureStreams(ctx, conn.JetStream(), n))
	return c
}

func connect(t *testing.T, urls string) *cluster.Conn {
	t.Helper()
	conn, err := cluster.Connect(testContext(t), cluster.Options{URLs: []string{urls}, Name: t.Name()})
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	return conn
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), long)
	t.Cleanup(cancel)
	return ctx
}

func claimer(t *testing.T, conn *cluster.Conn, ackWait time.Duration) *cluster.Claimer {
	t.Helper()
	c, err := cluster.NewClaimer(testContext(t), conn.JetStream(), cluster.ClaimerOptions{AckWait: ackWait, Trust: coordinatorTrust})
	require.NoError(t, err)
	return c
}

func queued(t *testing.T, conn *cluster.Conn) uint64 {
	t.Helper()
	s, err := conn.JetStream().Stream(testContext(t), cluster.TasksStream)
	require.NoError(t, err)
	info, err := s.Info(testContext(t))
	require.NoError(t, err)
	return info.State.Msgs
}

func TestTaskPublishedTwiceIsQueuedOnce(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	js := conn.JetStream()

	require.NoError(t, cluster.PublishTask(ctx, js, coordinatorKey, task("t1", 1)))
	require.NoError(t, cluster.PublishTask(ctx, js, coordinatorKey, task("t1", 1)))
	assert.EqualValues(t, 1, queued(t, conn))
	// Another attempt is another message.
	require.NoError(t, cluster.PublishTask(ctx, js, coordinatorKey, task("t1", 2)))
	assert.EqualValues(t, 2, queued(t, conn))

	claim, err := claimer(t, conn, 0).Claim(ctx)
	require.NoError(t, err)
	assert.Equal(t, task("t1", 1), claim.Task)
	assert.Equal(t, 1, claim.Delivered)
	require.NoError(t, claim.Done(ctx))
	assert.EqualValues(t, 1, queued(t, conn), "a task done leaves the queue")
	// Republished after it was done, within the dedup window, it is not queued again.
	require.NoError(t, cluster.PublishTask(ctx, js, coordinatorKey, task("t1", 1)))
	assert.EqualValues(t, 1, queued(t, conn))
}

func TestPublishRefusesInvalid(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	bad := task("t1", 1)
	bad.RepoURL = ""
	require.ErrorContains(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, bad), "repo_url")
	require.ErrorContains(t, cluster.PublishResult(ctx, conn.JetStream(), workerKey, cluster.Result{Run: run, TaskID: "t1", Attempt: 1}), "worker")
	assert.EqualValues(t, 0, queued(t, conn))
}

func TestConcurrentWorkersNeverShareATask(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	const tasks, workers = 12, 3
	pub := connect(t, c.URLs())
	for i := range tasks {
		require.NoError(t, cluster.PublishTask(ctx, pub.JetStream(), coordinatorKey, task(fmt.Sprintf("t%d", i), 1)))
	}

	var mu sync.Mutex
	got := map[string][]int{}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for w := range workers {
		cl := claimer(t, connect(t, c.URLs()), 0)
		wg.Go(func() {
			for {
				claim, err := cl.Claim(wctx)
				if err != nil {
					return
				}
				mu.Lock()
				got[claim.Task.ID] = append(got[claim.Task.ID], w)
				n := len(got)
				mu.Unlock()
				assert.NoError(t, claim.Done(ctx))
				if n == tasks {
					stop()
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "the workers did not take all tasks in time")
	assert.Len(t, got, tasks)
	for id, ws := range got {
		assert.Len(t, ws, 1, "task %s was claimed by workers %v", id, ws)
	}
	assert.EqualValues(t, 0, queued(t, pub))
}

const shortAckWait = 2 * time.Second

func TestClaimKeptAliveIsNotRedelivered(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	a := claimer(t, connect(t, c.URLs()), shortAckWait)
	b := claimer(t, connect(t, c.URLs()), shortAckWait)
	assert.Equal(t, shortAckWait, a.AckWait())
	require.NoError(t, cluster.PublishTask(ctx, connect(t, c.URLs()).JetStream(), coordinatorKey, task("t1", 1)))

	claim, err := a.Claim(ctx)
	require.NoError(t, err)
	keep, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(a.AckWait() / 4)
		defer tick.Stop()
		for {
			select {
			case <-keep.Done():
				return
			case <-tick.C:
				if err := claim.InProgress(keep); keep.Err() == nil {
					assert.NoError(t, err)
				}
			}
		}
	})
	// Over twice the ack wait, the other worker gets nothing.
	bctx, cancel := context.WithTimeout(ctx, 3*shortAckWait)
	defer cancel()
	_, err = b.Claim(bctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	stop()
	wg.Wait()
	require.NoError(t, claim.Done(ctx))
}

func TestAbandonedClaimGoesToAnotherWorker(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	aConn := connect(t, c.URLs())
	a := claimer(t, aConn, shortAckWait)
	b := claimer(t, connect(t, c.URLs()), shortAckWait)
	require.NoError(t, cluster.PublishTask(ctx, connect(t, c.URLs()).JetStream(), coordinatorKey, task("t1", 1)))

	claimA, err := a.Claim(ctx)
	require.NoError(t, err)
	begun := time.Now()
	aConn.Close() // the worker is gone without a word

	claimB, err := b.Claim(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(begun), shortAckWait/2, "redelivered before the ack wait")
	assert.Equal(t, claimA.Task, claimB.Task)
	assert.Equal(t, 2, claimB.Delivered)
	require.NoError(t, claimB.Done(ctx))
}

func TestReleaseHandsTheTaskBackAtOnce(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	const ackWait = 10 * time.Minute // Release does not wait for it
	a := claimer(t, connect(t, c.URLs()), ackWait)
	b := claimer(t, connect(t, c.URLs()), ackWait)
	require.NoError(t, cluster.PublishTask(ctx, connect(t, c.URLs()).JetStream(), coordinatorKey, task("t1", 1)))

	claimA, err := a.Claim(ctx)
	require.NoError(t, err)
	require.NoError(t, claimA.Release(ctx))
	claimB, err := b.Claim(ctx)
	require.NoError(t, err)
	assert.Equal(t, "t1", claimB.Task.ID)
	assert.Equal(t, 2, claimB.Delivered)
	require.NoError(t, claimB.Done(ctx))
}

func TestClaimEndsWithItsContext(t *testing.T) {
	c := start(t, 1)
	cl := claimer(t, connect(t, c.URLs()), 0)
	assert.Equal(t, cluster.DefaultAckWait, cl.AckWait())
	ctx, cancel := context.WithCancel(testContext(t))
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err := cl.Claim(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

// collector runs a coordinator's Results until its context ends.
type collector struct {
	mu   sync.Mutex
	seen []cluster.Result
	news chan struct{}
}

func newCollector() *collector { return &collector{news: make(chan struct{}, 100)} }

func (c *collector) handle(_ context.Context, r cluster.Result) error {
	c.mu.Lock()
	c.seen = append(c.seen, r)
	c.mu.Unlock()
	c.news <- struct{}{}
	return nil
}

func (c *collector) count(taskID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.seen {
		if r.TaskID == taskID {
			n++
		}
	}
	return n
}

// waitFor waits until the collector has seen n results of taskID.
func (c *collector) waitFor(ctx context.Context, t *testing.T, taskID string, n int) {
	t.Helper()
	for c.count(taskID) < n {
		select {
		case <-c.news:
		case <-ctx.Done():
			require.FailNow(t, "no result", "for task %s", taskID)
		}
	}
}

func runResults(t *testing.T, ctx context.Context, conn *cluster.Conn, opts cluster.ConsumeOptions, handle func(context.Context, cluster.Result) error) {
	var wg sync.WaitGroup
	wg.Go(func() {
		err := cluster.Results(ctx, conn.JetStream(), opts, handle)
		assert.True(t, errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded), "Results: %v", err)
	})
	t.Cleanup(wg.Wait)
}

func TestResultPublishedTwiceIsSeenOnce(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	worker := connect(t, c.URLs()).JetStream()
	require.NoError(t, cluster.PublishResult(ctx, worker, workerKey, result("t1", 1, "w1")))
	require.NoError(t, cluster.PublishResult(ctx, worker, workerKey, result("t1", 1, "w1")))

	col := newCollector()
	rctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	runResults(t, rctx, connect(t, c.URLs()), cluster.ConsumeOptions{Trust: workerTrust}, col.handle)
	// A later result of the same task marks that everything before it was
	// handed over: a task's results come in order.
	require.NoError(t, cluster.PublishResult(ctx, worker, workerKey, result("t1", 2, "w1")))
	col.waitFor(ctx, t, "t1", 2)
	col.mu.Lock()
	defer col.mu.Unlock()
	assert.Equal(t, []cluster.Result{result("t1", 1, "w1"), result("t1", 2, "w1")}, col.seen)
}

// A result whose handling takes long (it waits for its events) holds back
// no other task's result, and the later results of its own task wait for
// it, so that the first of an attempt's results counts.
func TestASlowResultHoldsNoOtherTasks(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	worker := connect(t, c.URLs()).JetStream()
	for _, r := range []cluster.Result{result("slow", 1, "w1"), result("slow", 2, "w1"), result("t2", 1, "w1"), result("t3", 1, "w1")} {
		require.NoError(t, cluster.PublishResult(ctx, worker, workerKey, r))
	}

	release := make(chan struct{})
	col := newCollector()
	rctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	runResults(t, rctx, connect(t, c.URLs()), cluster.ConsumeOptions{Trust: workerTrust}, func(ctx context.Context, r cluster.Result) error {
		if r.TaskID == "slow" && r.Attempt == 1 {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return col.handle(ctx, r)
	})
	col.waitFor(ctx, t, "t2", 1)
	col.waitFor(ctx, t, "t3", 1)
	assert.Zero(t, col.count("slow"), "the slow result's task has nothing handled while it is")

	close(release)
	col.waitFor(ctx, t, "slow", 2)
	col.mu.Lock()
	defer col.mu.Unlock()
	var slow []int
	for _, r := range col.seen {
		if r.TaskID == "slow" {
			slow = append(slow, r.Attempt)
		}
	}
	assert.Equal(t, []int{1, 2}, slow, "a task's results are handled in the order published")
}

func TestRestartedCoordinatorSeesUnacknowledgedResult(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	require.NoError(t, cluster.PublishResult(ctx, connect(t, c.URLs()).JetStream(), workerKey, result("t1", 1, "w1")))

	// The first coordinator gets the result and dies before it acknowledges it.
	first := connect(t, c.URLs())
	got := make(chan cluster.Result, 1)
	fctx, kill := context.WithCancel(ctx)
	runResults(t, fctx, first, cluster.ConsumeOptions{AckWait: shortAckWait, Trust: workerTrust}, func(_ context.Context, r cluster.Result) error {
		got <- r
		kill()
		first.Close()
		return errors.New("killed")
	})
	select {
	case r := <-got:
		assert.Equal(t, "t1", r.TaskID)
	case <-ctx.Done():
		require.FailNow(t, "the first coordinator saw no result")
	}

	col := newCollector()
	runResults(t, ctx, connect(t, c.URLs()), cluster.ConsumeOptions{AckWait: shortAckWait, Trust: workerTrust}, col.handle)
	col.waitFor(ctx, t, "t1", 1)
	assert.Equal(t, 1, col.count("t1"))
}

func TestWorkGoesOnWhenAServerGoesDown(t *testing.T) {
	c := start(t, 3)
	ctx := testContext(t)
	coord := connect(t, c.URLs())
	workerConn := connect(t, c.URLs())
	worker := claimer(t, workerConn, 0)
	col := newCollector()
	runResults(t, ctx, coord, cluster.ConsumeOptions{Trust: workerTrust}, col.handle)

	roundTrip := func(id string) {
		t.Helper()
		require.NoError(t, cluster.PublishTask(ctx, coord.JetStream(), coordinatorKey, task(id, 1)))
		claim, err := worker.Claim(ctx)
		require.NoError(t, err)
		assert.Equal(t, id, claim.Task.ID)
		require.NoError(t, cluster.PublishResult(ctx, workerConn.JetStream(), workerKey, result(id, 1, "w1")))
		require.NoError(t, claim.Done(ctx))
		col.waitFor(ctx, t, id, 1)
	}
	roundTrip("before")

	// Shut down the server the worker is connected to.
	down := -1
	for i, u := range c.URLList() {
		if u == workerConn.NATS().ConnectedUrl() {
			down = i
		}
	}
	require.NotEqual(t, -1, down, "worker connected to %s, not one of %s", workerConn.NATS().ConnectedUrl(), c.URLs())
	t.Logf("shutting down %d; coordinator on %s", down, coord.NATS().ConnectedUrl())
	c.Shutdown(down)
	roundTrip("during")

	c.Restart(down)
	roundTrip("after")
	assert.Equal(t, 1, col.count("during"))
}

func TestConnectNeedsAServer(t *testing.T) {
	_, err := cluster.Connect(t.Context(), cluster.Options{})
	require.ErrorContains(t, err, "no NATS server URL")
	_, err = cluster.Connect(t.Context(), cluster.Options{URLs: []string{"nats://127.0.0.1:1"}})
	require.ErrorContains(t, err, "127.0.0.1:1")
}

func TestConnectTakesListsAndCommaSeparatedURLs(t *testing.T) {
	c := natstest.StartCluster(t, 1)
	conn, err := cluster.Connect(t.Context(), cluster.Options{URLs: []string{"nats://127.0.0.1:1, " + c.URL(0), ""}})
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, c.URL(0), conn.NATS().ConnectedUrl())
}

func TestConnectWithUserInURL(t *testing.T) {
	c := natstest.StartCluster(t, 1, natstest.WithUser("ralph", "secret"))
	_, err := cluster.Connect(t.Context(), cluster.Options{URLs: []string{c.URL(0)}})
	require.ErrorContains(t, err, "uthorization")
	withUser := strings.Replace(c.URL(0), "nats://", "nats://ralph:secret@", 1)
	conn, err := cluster.Connect(t.Context(), cluster.Options{URLs: []string{withUser}})
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, cluster.EnsureStreams(testContext(t), conn.JetStream(), 1))
}

func TestValidate(t *testing.T) {
	require.NoError(t, task("t-1.a_b", 1).Validate())
	named := task("t1", 1)
	named.Backend, named.Model = "claude", "claude-opus-4-1"
	require.NoError(t, named.Validate())
	for _, tc := range []struct {
		change func(*cluster.Task)
		want   string
	}{
		{func(t *cluster.Task) { t.ID = "a b" }, "id: "},
		{func(t *cluster.Task) { t.ID = "" }, "id: task id is empty"},
		{func(t *cluster.Task) { t.ID = "../x" }, "id: "},
		{func(t *cluster.Task) { t.Attempt = 0 }, "attempt: 0"},
		{func(t *cluster.Task) { t.Objective = "" }, "objective: empty"},
		{func(t *cluster.Task) { t.RepoURL = "" }, "repo_url: empty"},
		{func(t *cluster.Task) { t.BaseCommit = "" }, "base_commit: empty"},
		{func(t *cluster.Task) { t.BaseCommit = "main" }, `base_commit: "main" is not a full commit hash`},
		// The agent is checked on the worker too: the message is data.
		{func(t *cluster.Task) { t.Model = "--dangerously-skip-permissions" }, `backend, model: task t1: model "--dangerously-skip-permissions" starts with "-"`},
		{func(t *cluster.Task) { t.Model = "a b" }, `model "a b" contains ' '`},
		{func(t *cluster.Task) { t.Backend = "sh" }, `backend, model: task t1 names backend "sh", which is not an agent CLI ralph knows`},
		{func(t *cluster.Task) { t.Backend = "command" }, `names backend "command"`},
	} {
		bad := task("t1", 1)
		tc.change(&bad)
		err := bad.Validate()
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	// Every problem is named at once.
	err := cluster.Task{ID: "t1"}.Validate()
	require.Error(t, err)
	for _, field := range []string{"attempt", "objective", "repo_url", "base_commit"} {
		assert.Contains(t, err.Error(), field+":")
	}
	assert.True(t, strings.HasPrefix(err.Error(), `invalid task "t1": `), err.Error())

	require.NoError(t, result("t1", 1, "w").Validate())
	require.NoError(t, cluster.Result{Run: run, TaskID: "t1", Attempt: 1, Worker: "w", ExitCode: 1, Message: "refused"}.Validate())
	assert.ErrorContains(t, cluster.Result{Run: run, TaskID: "t1", Attempt: 1, Worker: "w", Branch: "ralph/t1"}.Validate(), "head: empty")
	assert.ErrorContains(t, cluster.Result{Run: run, TaskID: "t 1", Attempt: 1, Worker: "w"}.Validate(), "task_id: ")

	good := cluster.Events{Run: run, TaskID: "t1", Attempt: 1, Worker: "w", Lines: []byte("{}\n")}
	require.NoError(t, good.Validate())
	partial := good
	partial.Lines = []byte("{}\n{")
	assert.ErrorContains(t, partial.Validate(), "lines: ")
}

func TestEventsArePublishedOncePerOffset(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	js := connect(t, c.URLs()).JetStream()
	e := cluster.Events{Run: run, TaskID: "t1", Attempt: 1, Worker: "w", Lines: []byte("{\"topic\":\"a\"}\n")}
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, e))
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, e))
	e.Offset = int64(len(e.Lines))
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, e))
	s, err := js.Stream(ctx, cluster.EventsStream)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, info.State.Msgs)
	msg, err := s.GetLastMsgForSubject(ctx, cluster.EventsSubject("t1"))
	require.NoError(t, err)
	assert.Contains(t, string(msg.Data), `"offset":14`)
}

func TestEventsReachTheCoordinatorInOrder(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	js := connect(t, c.URLs()).JetStream()
	first := cluster.Events{Run: run, TaskID: "t1", Attempt: 1, Worker: "w", Lines: []byte("{\"n\":1}\n")}
	second := first
	second.Offset, second.Lines = int64(len(first.Lines)), []byte("{\"n\":2}\n{\"n\":3}\n")
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, first))
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, first))
	_, err := js.Publish(ctx, cluster.EventsSubject("t1"), []byte("not json"))
	require.NoError(t, err)
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, second))

	got := make(chan cluster.Events, 10)
	invalid := make(chan string, 10)
	rctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	var wg sync.WaitGroup
	wg.Go(func() {
		err := cluster.EventsOf(rctx, connect(t, c.URLs()).JetStream(), cluster.ConsumeOptions{
			Trust:   workerTrust,
			Invalid: func(subject string, _ error) { invalid <- subject },
		}, func(_ context.Context, e cluster.Events) error {
			got <- e
			return nil
		})
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Cleanup(wg.Wait)
	for _, want := range []cluster.Events{first, second} {
		select {
		case e := <-got:
			assert.Equal(t, want, e)
		case <-ctx.Done():
			require.FailNow(t, "no events")
		}
	}
	select {
	case subject := <-invalid:
		assert.Equal(t, cluster.EventsSubject("t1"), subject)
	case <-ctx.Done():
		require.FailNow(t, "the message that is no batch was not reported")
	}
	assert.Empty(t, got)
}

func TestClaimDropsWhatIsNotATask(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	conn := connect(t, c.URLs())
	_, err := conn.JetStream().Publish(ctx, cluster.TaskSubject("junk"), []byte("{"))
	require.NoError(t, err)
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, task("t1", 1)))
	var dropped []string
	cl, err := cluster.NewClaimer(ctx, conn.JetStream(), cluster.ClaimerOptions{
		Trust:   coordinatorTrust,
		Invalid: func(subject string, _ error) { dropped = append(dropped, subject) },
	})
	require.NoError(t, err)
	claim, err := cl.Claim(ctx)
	require.NoError(t, err)
	assert.Equal(t, "t1", claim.Task.ID)
	assert.Equal(t, []string{cluster.TaskSubject("junk")}, dropped)
	require.NoError(t, claim.Done(ctx))
	assert.EqualValues(t, 0, queued(t, conn))
}

// A batch handed to a coordinator that stopped before it acknowledged it
// holds back the later batches of its task; it must come again well before
// the task's result gives up waiting for its events (30 s).
func TestEventsLostInFlightComeAgainSoon(t *testing.T) {
	c := start(t, 1)
	ctx := testContext(t)
	js := connect(t, c.URLs()).JetStream()
	first := cluster.Events{Run: run, TaskID: "t1", Attempt: 1, Worker: "w", Lines: []byte("{\"n\":1}\n")}
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, first))

	lost, stop := context.WithCancel(ctx)
	handed := make(chan struct{})
	err := cluster.EventsOf(lost, js, cluster.ConsumeOptions{Trust: workerTrust}, func(ctx context.Context, _ cluster.Events) error {
		close(handed)
		stop()
		<-ctx.Done()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	<-handed

	second := first
	second.Offset, second.Lines = int64(len(first.Lines)), []byte("{\"n\":2}\n")
	require.NoError(t, cluster.PublishEvents(ctx, js, workerKey, second))
	copied := followEvents(t, connect(t, c.URLs()))
	start := time.Now()
	copied.waitFor(t, "t1", append(append([]byte(nil), first.Lines...), second.Lines...))
	assert.Less(t, time.Since(start), 20*time.Second, "the lost batch came again too late for its task's result")
}
