package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/forgetest"
	gitrepo "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// The coordinator's loops run on workers, which the line of each task's
// start says instead of the worktree that only prepares its branch.
var _ autopilot.Elsewhere = (*cluster.Coordinator)(nil)

// coordinatorRepo is the coordinator's checkout: a clone of the shared
// remote with a prd.json of the given task ids and a ralph.yml.
func coordinatorRepo(t *testing.T, url string, ids ...string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	gittest.Run(t, t.TempDir(), "clone", "-q", url, repo)
	gittest.Run(t, repo, "config", "user.name", "Dev")
	gittest.Run(t, repo, "config", "user.email", "dev@example.com")
	var stories []string
	for i, id := range ids {
		stories = append(stories, fmt.Sprintf(`{"id": %q, "title": "Task %s", "priority": %d, "passes": false}`, id, id, i+1))
	}
	gittest.WriteFile(t, repo, "prd.json", `{"userStories": [`+strings.Join(stories, ",")+`]}`)
	gittest.WriteFile(t, repo, "ralph.yml", "event_loop:\n  max_iterations: 3\n")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "tasks")
	return repo
}

type coordinatorRun struct {
	repo   string
	events chan events.Event
	done   chan struct{}
	res    autopilot.Result
	err    error
}

// runCoordinator runs an autopilot in repo whose runner is a coordinator,
// until it ends or ctx does.
func runCoordinator(ctx context.Context, t *testing.T, conn *cluster.Conn, repo, url string, parallel int) *coordinatorRun {
	t.Helper()
	return runCoordinatorLogged(ctx, t, conn, repo, url, parallel, nil)
}

// runCoordinatorLogged is runCoordinator whose log lines also go to logs,
// when given.
func runCoordinatorLogged(ctx context.Context, t *testing.T, conn *cluster.Conn, repo, url string, parallel int, logs *logLines) *coordinatorRun {
	t.Helper()
	settings := config.Autopilot{Parallel: parallel, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", BaseBranch: "main"}
	return runCoordinatorWith(ctx, t, conn, repo, url, settings, logs)
}

// runCoordinatorWith is runCoordinatorLogged with the autopilot's settings.
func runCoordinatorWith(ctx context.Context, t *testing.T, conn *cluster.Conn, repo, url string, settings config.Autopilot, logs *logLines) *coordinatorRun {
	t.Helper()
	return runCoordinatorDelivering(ctx, t, conn, repo, url, settings, nil, logs)
}

// runCoordinatorDelivering is runCoordinatorWith whose pull requests
// (deliver: pr) are opened on pulls.
func runCoordinatorDelivering(ctx context.Context, t *testing.T, conn *cluster.Conn, repo, url string, settings config.Autopilot,
	pulls forge.PullRequests, logs *logLines) *coordinatorRun {
	t.Helper()
	co, err := cluster.NewCoordinator(cluster.CoordinatorOptions{JetStream: conn.JetStream(), Signer: coordinatorKey, Trust: workerTrust,
		Repo: repo, RemoteURL: url, Host: "coordinator", Logger: cluster.LogTo(func(msg string) {
			t.Logf("coordinator: %s", msg)
			if logs != nil {
				logs.add(msg)
			}
		})})
	require.NoError(t, err)
	sctx, stop := context.WithCancel(testContext(t))
	served := make(chan struct{})
	go func() { defer close(served); _ = co.Serve(sctx) }()
	source, err := tasks.Open(tasks.Spec{Type: "prd"}, repo)
	require.NoError(t, err)
	r := &coordinatorRun{repo: repo, events: make(chan events.Event, 1000), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer func() { stop(); <-served }()
		r.res, r.err = autopilot.Run(ctx, autopilot.Options{Repo: repo, Configs: []string{filepath.Join(repo, "ralph.yml")},
			Settings: settings, Source: source, Runner: co, PullRequests: pulls,
			OnEvent: func(ev events.Event, _ *runfiles.AutopilotState) { r.events <- ev }})
	}()
	t.Cleanup(func() { stop(); <-r.done })
	return r
}

func (r *coordinatorRun) wait(t *testing.T) autopilot.Result {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(long):
		require.FailNow(t, "the autopilot did not end")
	}
	require.NoError(t, r.err)
	return r.res
}

// The coordinator sends every task to the workers, merges each result once,
// and keeps each task's events and worker beside the autopilot's files.
func TestCoordinatorRunsTasksOnWorkers(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	url, _ := gittest.SharedRemote(t)
	ids := []string{"a", "b", "c", "d"}
	repo := coordinatorRepo(t, url, ids...)
	for _, host := range []string{"w1", "w2"} {
		startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: host, runner: newFakeRunner("", 2, nil)})
	}

	res := runCoordinator(testContext(t), t, conn, repo, url, 3).wait(t)
	assert.Equal(t, autopilot.Result{ExitCode: 0, Completed: 4}, res)

	merged, err := gitrepo.Repo{Dir: repo}.MergedTasks(context.Background(), "", "main")
	require.NoError(t, err)
	for _, id := range ids {
		assert.NotEmpty(t, merged[id], "%s is merged", id)
		assert.FileExists(t, filepath.Join(repo, id+"-2.txt"), "%s's last iteration is on main", id)
		assert.Equal(t, 1, strings.Count(gittest.Run(t, repo, "log", "--format=%B", "main"), gitrepo.TaskTrailer+": "+id+"\n"),
			"%s is merged once", id)

		dir := filepath.Join(repo, ".ralph", runfiles.RemoteDir, id)
		log, err := os.ReadFile(filepath.Join(dir, runfiles.RemoteEventsFile))
		require.NoError(t, err)
		assert.Equal(t, 2, bytes.Count(log, []byte(`"topic":"iteration.finished"`)), "%s's events are all copied", id)
		assert.True(t, bytes.HasSuffix(log, []byte("\"reason\":\"completed\"},\"source\":\"ralph\"}\n")))
		var info runfiles.WorkerInfo
		require.NoError(t, json.Unmarshal(must(os.ReadFile(filepath.Join(dir, runfiles.WorkerFile))), &info))
		assert.Contains(t, []string{"w1", "w2"}, info.Worker)

		assert.Empty(t, remoteRef(t, url, "refs/heads/ralph/"+id), "%s's branch is deleted from the remote once merged", id)
		assert.Empty(t, remoteRef(t, url, cluster.WIPRef(id)))
	}
	assert.Empty(t, strings.TrimSpace(gittest.Run(t, repo, "status", "--porcelain")))
}

// A coordinator interrupted while its tasks run on the workers, and run
// again, sends nothing twice and takes the results the workers published
// while it was away.
func TestCoordinatorRestartTakesResultsFromTheStreams(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	url, _ := gittest.SharedRemote(t)
	repo := coordinatorRepo(t, url, "a", "b")
	gate := make(chan struct{})
	runner := newFakeRunner("", 1, gate)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "w1", runner: runner})

	ctx, interrupt := context.WithCancel(testContext(t))
	first := runCoordinator(ctx, t, conn, repo, url, 2)
	nextLoop(t, runner)
	nextLoop(t, runner)
	interrupt()
	res := first.wait(t)
	assert.Equal(t, 130, res.ExitCode)
	assert.True(t, res.Resumable)
	// The loops go on without the coordinator, and their results wait.
	gate <- struct{}{}
	gate <- struct{}{}
	require.Eventually(t, func() bool { return streamMsgs(t, conn, cluster.ResultsStream) == 2 }, long, 20*time.Millisecond)

	res = runCoordinator(testContext(t), t, conn, repo, url, 2).wait(t)
	assert.Equal(t, autopilot.Result{ExitCode: 0, Completed: 2}, res)
	for _, id := range []string{"a", "b"} {
		assert.Equal(t, 1, strings.Count(gittest.Run(t, repo, "log", "--format=%B", "main"), gitrepo.TaskTrailer+": "+id+"\n"),
			"%s is merged once", id)
	}
	assert.Empty(t, runner.started, "no task ran twice")
	assert.EqualValues(t, 0, queued(t, conn))
}

// With deliver: push the coordinator delivers as a local autopilot does:
// each worker's result is merged on the shared remote's main, pushed
// there, and only then does the local main move.
func TestCoordinatorDeliversByPush(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	url, _ := gittest.SharedRemote(t)
	ids := []string{"a", "b"}
	repo := coordinatorRepo(t, url, ids...)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "w1", runner: newFakeRunner("", 1, nil)})

	settings := config.Autopilot{Parallel: 2, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", BaseBranch: "main",
		Deliver: "push", Remote: "origin"}
	run := runCoordinatorWith(testContext(t), t, conn, repo, url, settings, nil)
	res := run.wait(t)
	assert.Equal(t, autopilot.Result{ExitCode: 0, Completed: 2}, res)
	assert.Equal(t, gittest.Run(t, repo, "rev-parse", "main"), remoteRef(t, url, "refs/heads/main"), "the shared remote's main is the local one")
	log := gittest.Run(t, url, "log", "--format=%B", "main")
	for _, id := range ids {
		assert.Equal(t, 1, strings.Count(log, gitrepo.TaskTrailer+": "+id+"\n"), "%s is on the remote's main once", id)
		assert.Empty(t, remoteRef(t, url, "refs/heads/ralph/"+id), "%s's branch is deleted from the remote once merged", id)
	}
	pushed := 0
	for len(run.events) > 0 {
		if ev := <-run.events; ev.Topic == runfiles.TopicMergePushed {
			pushed++
		}
	}
	assert.Equal(t, 2, pushed)
}

// With deliver: pr the coordinator opens a pull request of each worker's
// verified result: the task's branch on the shared remote becomes the
// verified merge, and stays there, the pull request's head, once the task
// is done (close_on: opened); the worker's other refs go.
func TestCoordinatorDeliversPullRequests(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	url, _ := gittest.SharedRemote(t)
	repo := coordinatorRepo(t, url, "a")
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "w1", runner: newFakeRunner("", 1, nil)})
	pulls := forgetest.New("ralph-bot")

	settings := config.Autopilot{Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", BaseBranch: "main",
		Deliver: "pr", Remote: "origin", PR: config.PullRequests{CloseOn: "opened", PollSeconds: 1}}
	before := gittest.Run(t, repo, "rev-parse", "main")
	res := runCoordinatorDelivering(testContext(t), t, conn, repo, url, settings, pulls.Pulls(), nil).wait(t)
	assert.Equal(t, autopilot.Result{ExitCode: 0, Completed: 1}, res)
	pr, err := pulls.PR(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, forge.StateOpen, pr.State)
	assert.Equal(t, "ralph/a", pr.Head)
	head := remoteRef(t, url, "refs/heads/ralph/a")
	require.NotEmpty(t, head, "the pull request's branch stays on the remote")
	assert.Contains(t, gittest.Run(t, url, "log", "-1", "--format=%B", head), gitrepo.TaskTrailer+": a", "it is the verified merge")
	assert.Empty(t, remoteRef(t, url, cluster.WIPRef("a")), "the worker's work in progress is cleaned up")
	merged, err := gitrepo.Repo{Dir: repo}.MergedTasks(t.Context(), before, "main")
	require.NoError(t, err)
	assert.Empty(t, merged, "no merge lands on the coordinator's main, only the tracker's commits")
	gittest.Run(t, url, "cat-file", "-e", head+":a-1.txt") // the worker's work is in the pull request
	assert.NoFileExists(t, filepath.Join(repo, "a-1.txt"), "and not in the coordinator's checkout")
}

// The agent a story names travels with its task to the worker, whose loop
// runs with it; a story that names none runs with the configs'.
func TestCoordinatorSendsTheAgentATaskNames(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	url, _ := gittest.SharedRemote(t)
	repo := coordinatorRepo(t, url, "plain")
	gittest.WriteFile(t, repo, "prd.json", `{"userStories": [
  {"id": "named", "title": "Named", "priority": 1, "passes": false, "backend": "codex", "model": "gpt-5"},
  {"id": "plain", "title": "Plain", "priority": 2, "passes": false}]}`)
	gittest.Run(t, repo, "commit", "-qam", "name an agent")
	runner := newFakeRunner("", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "w1", runner: runner})

	res := runCoordinator(testContext(t), t, conn, repo, url, 1).wait(t)
	assert.Equal(t, autopilot.Result{ExitCode: 0, Completed: 2}, res)
	agents := map[string]autopilot.Agent{}
	for range 2 {
		l := nextLoop(t, runner)
		agents[l.job.TaskID] = l.job.Agent
	}
	assert.Equal(t, map[string]autopilot.Agent{"named": {Backend: "codex", Model: "gpt-5"}, "plain": {}}, agents)
}
