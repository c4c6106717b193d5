package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/natstest"
)

// workerRun is the autopilot run the tests' tasks belong to.
const workerRun = "20261201-120000"

// workerCluster is one NATS server, a shared remote, and what the
// coordinator would see: the results the workers publish.
type workerCluster struct {
	t       *testing.T
	urls    string
	conn    *cluster.Conn
	url     string // the shared remote
	base    string
	state   string // the scripted agent's script and counters
	results chan cluster.Result
	// keys are the coordinator's and the workers'; the test signs its
	// tasks as the coordinator, with signer.
	keys   *clusterKeys
	signer *cluster.Signer
}

func newWorkerCluster(t *testing.T, sc agentScript) *workerCluster {
	t.Helper()
	nats := natstest.StartCluster(t, 1)
	ctx := t.Context()
	conn, err := cluster.Connect(ctx, cluster.Options{URLs: []string{nats.URLs()}, Name: t.Name()})
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	require.NoError(t, cluster.EnsureStreams(ctx, conn.JetStream(), 1))
	c := &workerCluster{t: t, urls: nats.URLs(), conn: conn, state: t.TempDir(), results: make(chan cluster.Result, 16),
		keys: newClusterKeys(t)}
	c.signer, err = cluster.ReadSigner(c.keys.coordinatorSeed)
	require.NoError(t, err)
	workers, err := cluster.NewKeyring(cluster.RoleWorker, c.keys.worker)
	require.NoError(t, err)
	c.url, c.base = gittest.SharedRemote(t)
	require.NoError(t, sc.WriteFile(filepath.Join(c.state, "script.json")))
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cluster.Results(rctx, conn.JetStream(), cluster.ConsumeOptions{Trust: workers}, func(_ context.Context, r cluster.Result) error {
			c.results <- r
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// task is a task for the shared remote whose loop runs the scripted agent.
func (c *workerCluster) task(id string) cluster.Task {
	cfg := agentCLI() + "event_loop:\n  max_iterations: 6\n  completion_confirmations: 1\n"
	return cluster.Task{Run: workerRun, ID: id, Attempt: 1, Objective: "do " + id, RepoURL: c.url, BaseCommit: c.base,
		Configs: []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte(cfg)}}}
}

func (c *workerCluster) publish(tasks ...cluster.Task) {
	c.t.Helper()
	for _, task := range tasks {
		require.NoError(c.t, cluster.PublishTask(c.t.Context(), c.conn.JetStream(), c.signer, task))
	}
}

func (c *workerCluster) nextResult() cluster.Result {
	c.t.Helper()
	select {
	case r := <-c.results:
		return r
	case <-time.After(2 * time.Minute):
		require.FailNow(c.t, "no result")
		return cluster.Result{}
	}
}

// workerProc is a `ralph worker` running in the background.
type workerProc struct {
	name   string
	dir    string // its checkouts
	cmd    *exec.Cmd
	stderr *lockedWriter
	exited chan struct{}
	err    error
}

// startWorker starts `ralph worker` named name, allowed to work on the
// shared remote, with a short ack wait and the cluster's keys, and its own
// agent (-c), or instead args when given.
func (c *workerCluster) startWorker(name string, args ...string) *workerProc {
	c.t.Helper()
	return c.startWorkerIn(name, c.t.TempDir(), args...)
}

// startWorkerIn is startWorker keeping its checkouts in dir (--dir).
func (c *workerCluster) startWorkerIn(name, dir string, args ...string) *workerProc {
	c.t.Helper()
	if len(args) == 0 {
		args = c.keys.ownAgent()
	}
	p := &workerProc{name: name, dir: dir, stderr: &lockedWriter{}, exited: make(chan struct{})}
	p.cmd = exec.Command(ralphBin, append(append([]string{"worker", "--cluster", c.urls, "--dir", p.dir, "--name", name,
		"--allow-remote", c.url, "--ack-wait", "3s"}, c.keys.workerArgs()...), args...)...)
	p.cmd.Dir = c.t.TempDir()
	p.cmd.Env = append(append(os.Environ(), scriptEnv(c.state)...), "E2E_WORKER="+name)
	p.cmd.Stderr = p.stderr
	require.NoError(c.t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	c.t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(time.Minute):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if c.t.Failed() {
			c.t.Logf("%s's stderr:\n%s", name, p.stderr.String())
		}
	})
	waitFor(c.t, name+" waiting for tasks", func() bool { return strings.Contains(p.stderr.String(), "waiting for tasks") })
	return p
}

// wait waits for the worker to exit and returns its exit code.
func (p *workerProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return exitCodeOf(p.err)
	case <-time.After(2 * time.Minute):
		require.FailNow(t, p.name+" did not exit")
		return 0
	}
}

func remoteRef(t *testing.T, url, ref string) string {
	t.Helper()
	out := gittest.Run(t, t.TempDir(), "ls-remote", url, ref)
	if out == "" {
		return ""
	}
	return out[:40]
}

// remoteFile is a file's content at commit on the remote, trimmed.
func remoteFile(t *testing.T, url, commit, name string) string {
	t.Helper()
	return gittest.Run(t, url, "show", commit+":"+name)
}

// Two workers take tasks off the queue: a task runs and its branch is
// pushed; a task for a repository outside the allow list and one whose
// config has an unknown key are failed with the reason.
func TestWorkerRunsAndRefusesTasks(t *testing.T) {
	t.Parallel()
	c := newWorkerCluster(t, agentScript{Steps: []step{{
		Sh:     `echo "$E2E_WORKER" > "$(basename "$PWD").txt"`,
		Commit: "do the task",
		Say:    tag("LOOP_COMPLETE", "done"),
	}}})
	w1 := c.startWorker("w1")
	w2 := c.startWorker("w2")
	otherURL, otherBase := gittest.SharedRemote(t)
	elsewhere := c.task("elsewhere")
	elsewhere.RepoURL, elsewhere.BaseCommit = otherURL, otherBase
	bad := c.task("bad-config")
	bad.Configs = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte(agentCLI() + "bogus: 1\n")}}
	c.publish(c.task("t-ok"), elsewhere, bad)

	got := map[string]cluster.Result{}
	for range 3 {
		r := c.nextResult()
		got[r.TaskID] = r
	}
	ok := got["t-ok"]
	assert.Equal(t, 0, ok.ExitCode, "%+v", ok)
	assert.Equal(t, "completed", ok.Reason)
	assert.Equal(t, "ralph/t-ok", ok.Branch)
	assert.Equal(t, ok.Head, remoteRef(t, c.url, "refs/heads/ralph/t-ok"))
	assert.Equal(t, ok.Worker, remoteFile(t, c.url, ok.Head, "t-ok.txt"), "the agent's commit, by the worker that ran it")
	assert.Equal(t, "do the task", gittest.Run(t, c.url, "log", "-1", "--format=%s", ok.Head))
	ran := map[string]*workerProc{w1.name: w1, w2.name: w2}[ok.Worker]
	require.NotNil(t, ran, "t-ok ran on %q", ok.Worker)
	assert.Contains(t, ran.stderr.String(), "checkouts in "+ran.dir, "--dir is where a worker keeps its checkouts")
	cloned, err := os.ReadDir(ran.dir)
	require.NoError(t, err)
	assert.NotEmpty(t, cloned, "%s cloned the repository into its --dir", ran.name)
	assert.True(t, ok.Cost.Unknown, "the loop's cost reaches the coordinator, unknown for an agent that names no model: %+v", ok.Cost)

	assert.Equal(t, 3, got["elsewhere"].ExitCode)
	assert.Contains(t, got["elsewhere"].Message, "repository not in this worker's allow list: "+otherURL)
	assert.Equal(t, 3, got["bad-config"].ExitCode)
	assert.Contains(t, got["bad-config"].Message, `unknown key "bogus"`)
	assert.Contains(t, got["bad-config"].Message, "ralph.yml:4")
	assert.Empty(t, remoteRef(t, c.url, "refs/heads/ralph/bad-config"))
}

// A worker stopped with SIGTERM mid-task lets the loop finish its
// iteration, pushes the work in progress and hands the task back; the
// other worker finishes the task from there.
func TestWorkerHandsBackOnSIGTERM(t *testing.T) {
	t.Parallel()
	// Each iteration adds the worker's name to progress.txt and commits it;
	// the third line completes the task. An iteration that has not
	// completed it waits for the test's go file before it commits.
	var c *workerCluster
	state := func(name string) string { return filepath.Join(c.state, name) }
	c = newWorkerCluster(t, agentScript{Steps: []step{{
		WhenLines: map[string]int{"progress.txt": 2},
		Sh:        `echo "$E2E_WORKER" >> progress.txt`,
		Commit:    "the last part",
		Say:       tag("LOOP_COMPLETE", "done"),
		Else: &step{
			Sh: `echo "$E2E_WORKER" >> progress.txt; touch "$SCRIPTAGENT_STATE/in-$E2E_WORKER"; ` +
				`while [ ! -f "$SCRIPTAGENT_STATE/go" ]; do sleep 0.05; done`,
			Commit: "a part",
		},
	}}})
	workers := map[string]*workerProc{"w1": c.startWorker("w1"), "w2": c.startWorker("w2")}
	c.publish(c.task("long"))

	var first, second *workerProc
	waitFor(t, "an iteration of the task", func() bool {
		for name, p := range workers {
			if _, err := os.Stat(state("in-" + name)); err == nil {
				first = p
				return true
			}
		}
		return false
	})
	for name, p := range workers {
		if name != first.name {
			second = p
		}
	}
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	stop := filepath.Join(first.dir, "tasks", "long", ".ralph", "stop")
	waitFor(t, "the stop request", func() bool { _, err := os.Stat(stop); return err == nil })
	require.NoError(t, os.WriteFile(state("go"), nil, 0o644))

	assert.Equal(t, 130, first.wait(t), first.stderr.String())
	log := first.stderr.String()
	assert.Contains(t, log, "task long: asking its loop to stop after its iteration")
	assert.Contains(t, log, "task long: its loop stopped (exit 1: a stop request asked the loop to stop)")
	assert.Contains(t, log, "task long: handed back")
	wip := remoteRef(t, c.url, cluster.WIPRef("long"))
	require.NotEmpty(t, wip, "the work in progress is pushed")
	assert.Equal(t, first.name, strings.Split(remoteFile(t, c.url, wip, "progress.txt"), "\n")[0],
		"the finished iteration's work is in it")
	assert.Equal(t, "a part", gittest.Run(t, c.url, "log", "-1", "--format=%s", wip), "the agent's own commit: it finished its iteration")

	r := c.nextResult()
	assert.Equal(t, second.name, r.Worker)
	assert.Equal(t, 0, r.ExitCode, "%+v\n%s", r, second.stderr.String())
	assert.Equal(t, r.Head, remoteRef(t, c.url, "refs/heads/ralph/long"))
	lines := strings.Split(remoteFile(t, c.url, r.Head, "progress.txt"), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, first.name, lines[0], "the task went on from the first worker's work")
	assert.Equal(t, second.name, lines[2])
	gittest.Run(t, c.url, "merge-base", "--is-ancestor", wip, r.Head)
	select {
	case extra := <-c.results:
		t.Errorf("one result only, but also %+v", extra)
	default:
	}
}
