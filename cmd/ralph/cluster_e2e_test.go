package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/natstest"
	"github.com/ralph-loop/ralph/runfiles"
)

// The cluster's end-to-end test runs the real binary as a coordinator and
// as three workers on one machine, over an embedded three-server JetStream
// cluster, with a bare repository as the shared remote.

// clusterAgent does a task in two iterations, whichever worker runs them:
// the first commits <task>-1.txt; the next, seeing it, waits for the test's
// go file, commits <task>-2.txt and claims completion. A loop continued from
// work in progress thus goes on with the second part.
func clusterAgent(goFile string) agentScript {
	commit := `git -c user.name=agent -c user.email=agent@example.com commit -q -m`
	return agentScript{Steps: []step{{Sh: `task=$(basename "$PWD"); ` +
		`if [ -f "$task-1.txt" ]; then ` +
		`while [ ! -f ` + goFile + ` ]; do sleep 0.05; done; ` +
		`echo two > "$task-2.txt"; git add -A; ` + commit + ` "$task part 2"; ` +
		`echo '<event topic="LOOP_COMPLETE">done</event>'; ` +
		`else echo one > "$task-1.txt"; git add -A; ` + commit + ` "$task part 1"; fi`}}}
}

// clusterKeys are the keys of an end-to-end cluster, their seeds in files
// as `ralph cluster keygen` writes them: the coordinator's, and one the
// workers share; and the workers' own config, which names their agent.
type clusterKeys struct {
	coordinatorSeed, coordinator string // the seed's file, the public key
	workerSeed, worker           string
	workerConfig                 string
}

func newClusterKeys(t testing.TB) *clusterKeys {
	t.Helper()
	dir := t.TempDir()
	k := &clusterKeys{coordinatorSeed: filepath.Join(dir, "coordinator.nk"), workerSeed: filepath.Join(dir, "worker.nk"),
		workerConfig: filepath.Join(dir, "worker.yml")}
	var err error
	k.coordinator, err = cluster.WriteNewSeed(k.coordinatorSeed)
	require.NoError(t, err)
	k.worker, err = cluster.WriteNewSeed(k.workerSeed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(k.workerConfig, []byte(agentCLI()), 0o644))
	return k
}

// section is the autopilot.cluster keys that give the coordinator its key
// and trust the workers'.
func (k *clusterKeys) section() string {
	return fmt.Sprintf("    seed: %s\n    trust_workers: [%s]\n", k.coordinatorSeed, k.worker)
}

// workerArgs are the flags that give a worker its key and its trust in
// the coordinator.
func (k *clusterKeys) workerArgs() []string {
	return []string{"--seed", k.workerSeed, "--trust-coordinator", k.coordinator}
}

// ownAgent is the flag that gives a worker its own agent, the scripted one.
func (k *clusterKeys) ownAgent() []string { return []string{"-c", k.workerConfig} }

type clusterWorker struct {
	name string
	dir  string
	cmd  *exec.Cmd
	log  *lockedWriter
}

// startWorker starts `ralph worker` in its own process group.
func (w *workspace) startWorker(name, urls, remote string, replicas int) *clusterWorker {
	w.t.Helper()
	return w.startWorkerSlots(name, urls, remote, replicas, 1)
}

// startWorkerSlots is startWorker with slots loops at once.
func (w *workspace) startWorkerSlots(name, urls, remote string, replicas, slots int) *clusterWorker {
	w.t.Helper()
	cw := &clusterWorker{name: name, dir: filepath.Join(w.t.TempDir(), name), log: &lockedWriter{}}
	cw.cmd = exec.Command(ralphBin, append([]string{"worker", "--cluster", urls, "--replicas", strconv.Itoa(replicas), "--slots", strconv.Itoa(slots),
		"--checkouts", cw.dir, "--name", name, "--allow-remote", remote, "--ack-wait", "3s"},
		append(w.keys.workerArgs(), w.keys.ownAgent()...)...)...)
	cw.cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	cw.cmd.Stderr = cw.log
	require.NoError(w.t, cw.cmd.Start())
	w.t.Cleanup(func() {
		_ = cw.cmd.Process.Signal(syscall.SIGTERM)
		_ = cw.cmd.Wait()
		cw.killLoops(w.t)
	})
	return cw
}

// killLoops kills what the worker's loops left running, as a machine that
// died would: each loop and its agent's process group.
func (cw *clusterWorker) killLoops(t testing.TB) {
	t.Helper()
	loops, _ := filepath.Glob(filepath.Join(cw.dir, "tasks", "*"))
	for _, dir := range loops {
		if held, info := runfiles.LockHeld(runfiles.In(dir).Lock()); held {
			killProcess(info.PID)
		}
		data, _ := os.ReadFile(filepath.Join(dir, runfiles.DirName, "agent.pgid"))
		first, _, _ := strings.Cut(string(data), "\n")
		if pgid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pgid > 1 {
			killProcessGroup(pgid)
		}
	}
}

// remoteSubjects are the subjects of the commits on ref in the bare
// repository at remote, newest first.
func remoteSubjects(t *testing.T, remote, ref string) []string {
	cmd := exec.Command("git", "--git-dir", remote, "log", "--format=%s", ref, "--")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestClusterRunsEightTasksThroughAKilledWorkerAndALostServer(t *testing.T) {
	t.Parallel()
	servers := natstest.StartCluster(t, 3)
	urls := servers.URLs()
	ids := []string{"T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"}
	w, remote := newClusterRepo(t, "  parallel: 4\n  cluster:\n    replicas: 3\n", ids)
	goFile := filepath.Join(w.state, "go")
	w.script(clusterAgent(goFile))

	workers := map[string]*clusterWorker{}
	for _, name := range []string{"w1", "w2", "w3"} {
		workers[name] = w.startWorker(name, urls, remote, 3)
	}
	coordinator, coordinatorLog := w.startRalph("autopilot", "--cluster", urls)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the coordinator's output:\n%s", coordinatorLog.String())
			for _, cw := range workers {
				t.Logf("%s's output:\n%s", cw.name, cw.log.String())
			}
		}
	})

	// A task whose first part a worker has pushed as work in progress, and
	// whose second part it is running.
	var victim string
	var killed *clusterWorker
	waitFor(t, "a task's first part pushed as work in progress", func() bool {
		for _, id := range ids {
			info, err := runfiles.ReadWorkerInfo(w.dir, id)
			subjects := remoteSubjects(t, remote, "refs/ralph/wip/"+id)
			if err == nil && len(subjects) > 0 && subjects[0] == id+" part 1" {
				victim, killed = id, workers[info.Worker]
				return killed != nil
			}
		}
		return false
	})
	require.NoError(t, killed.cmd.Process.Signal(syscall.SIGKILL))
	_ = killed.cmd.Wait()
	killed.killLoops(t)
	t.Logf("killed %s, which ran %s", killed.name, victim)

	servers.Shutdown(1)
	require.NoError(t, os.WriteFile(goFile, nil, 0o644))

	ended := make(chan error, 1)
	go func() { ended <- coordinator.Wait() }()
	select {
	case err := <-ended:
		require.Equal(t, 0, exitCodeOf(err), "the coordinator's output:\n%s", coordinatorLog.String())
	case <-time.After(4 * time.Minute):
		for _, cw := range workers {
			t.Logf("%s:\n%s", cw.name, cw.log.String())
		}
		t.Fatalf("the coordinator did not end; its output:\n%s", coordinatorLog.String())
	}

	var prd struct {
		UserStories []struct {
			ID     string
			Passes bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(w.read("prd.json")), &prd))
	history := git(t, w.dir, "log", "--format=%B", "main")
	for _, id := range ids {
		assert.Equal(t, 1, strings.Count(history, "Ralph-Task: "+id+"\n"), "%s is merged once", id)
		assert.Equal(t, 1, strings.Count(history, id+" part 1\n"), "%s's first part is done once", id)
		assert.FileExists(t, filepath.Join(w.dir, id+"-2.txt"))
		events, err := os.ReadFile(runfiles.In(w.dir).RemoteEvents(id))
		require.NoError(t, err, "%s's events are copied", id)
		assert.Contains(t, lastLine(events), `"topic":"loop.terminate"`, "%s's events end with its loop's end", id)
		assert.Contains(t, lastLine(events), `"reason":"completed"`, id)
	}
	for _, s := range prd.UserStories {
		assert.True(t, s.Passes, "%s is closed in prd.json", s.ID)
	}
	info, err := runfiles.ReadWorkerInfo(w.dir, victim)
	require.NoError(t, err)
	assert.NotEqual(t, killed.name, info.Worker, "another worker finished %s", victim)
	events, err := os.ReadFile(runfiles.In(w.dir).RemoteEvents(victim))
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(events, []byte(`"topic":"loop.started"`)),
		"%s's copy holds the killed worker's run and the one that continued it", victim)
}

// newClusterRepo is an autopilot repository whose prd.json has tasks ids,
// with a bare repository as its origin, the shared remote.
func newClusterRepo(t testing.TB, section string, ids []string) (w *workspace, remote string) {
	t.Helper()
	remote = filepath.Join(t.TempDir(), "shared.git")
	git(t, t.TempDir(), "init", "-q", "--bare", remote)
	keys := newClusterKeys(t)
	if before, after, ok := strings.Cut(section, "  cluster:\n"); ok {
		section = before + "  cluster:\n" + keys.section() + after
	} else {
		section += "  cluster:\n" + keys.section()
	}
	w = newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n"+section)
	w.keys = keys
	var stories []string
	for i, id := range ids {
		stories = append(stories, fmt.Sprintf(`{"id": %q, "title": "Task %s", "priority": %d, "passes": false}`, id, id, i+1))
	}
	w.write("prd.json", `{"userStories": [`+strings.Join(stories, ", ")+"]}\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	git(t, w.dir, "remote", "add", "origin", remote)
	git(t, w.dir, "push", "-q", "origin", "main")
	return w, remote
}

func lastLine(data []byte) string {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[len(lines)-1]
}

// A task whose merge conflicts is retried on a worker: the worker merges
// main into the task's work itself, the loop resolves the conflict, and no
// commit of conflict markers is made anywhere, by ralph or on main.
func TestClusterRetriesAConflictWithoutCommittingMarkers(t *testing.T) {
	t.Parallel()
	servers := natstest.StartCluster(t, 1)
	urls := servers.URLs()
	w, remote := newClusterRepo(t, "  parallel: 2\n  retries: 1\n  cluster:\n    replicas: 1\n", []string{"first", "second"})
	w.write("shared.txt", "base\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "a shared file")
	git(t, w.dir, "push", "-q", "origin", "main")
	// The retry finds main merged in and keeps both lines.
	w.script(conflictAgent(keepBoth))
	var workers []*clusterWorker
	for _, name := range []string{"w1", "w2"} {
		workers = append(workers, w.startWorker(name, urls, remote, 1))
	}
	r := w.ralph("autopilot", "--cluster", urls)
	if r.code != 0 {
		for _, cw := range workers {
			t.Logf("%s:\n%s", cw.name, cw.log.String())
		}
	}
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	// first waits for second to commit, but which of them lands first is
	// up to the workers; the other conflicts.
	assert.Regexp(t, `(first|second): running its loop again on the new base \(attempt 2\)`, r.stderr)
	// Each task's start says it runs on a worker, not in a worktree here.
	for _, task := range []string{"first", "second"} {
		assert.Contains(t, r.stderr, task+" (Task "+task+") → a worker, on branch ralph/"+task+"; watch it with `ralph watch --task "+task+"`\n")
	}
	assert.NotContains(t, r.stderr, "→ .worktrees/")
	assert.Equal(t, "first\nsecond\n", w.read("shared.txt"))
	assert.Equal(t, map[string]int{"first": 1, "second": 1}, w.ralphMerges())
	assert.Empty(t, w.markersOnMain())
	// Every commit anywhere: main's, and what the workers pushed.
	all := git(t, w.dir, "log", "--all", "-p", "--format=%s")
	assert.NotContains(t, all, "\n+<<<<<<<", "no commit adds a conflict marker")
	assert.NotContains(t, all, "'s attempt 2", "the retry's start is not a commit of the conflict")
	pushed := exec.Command("git", "--git-dir", remote, "log", "--all", "-p", "--format=%s")
	out, err := pushed.Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "\n+<<<<<<<", "nothing pushed holds a conflict marker")
}

// A worker whose --allow-remote does not list the repository hands the
// task back instead of failing it, and another worker runs it.
func TestClusterAMisconfiguredWorkerHandsTheTaskOn(t *testing.T) {
	t.Parallel()
	servers := natstest.StartCluster(t, 1)
	urls := servers.URLs()
	w, remote := newClusterRepo(t, "  cluster:\n    replicas: 1\n", []string{"T1"})
	w.script(taskAgent("0"))
	bad := w.startWorker("misconfigured", urls, filepath.Join(t.TempDir(), "elsewhere.git"), 1)
	coordinator, coordinatorLog := w.startRalph("autopilot", "--cluster", urls)
	waitFor(t, "the misconfigured worker's refusal", func() bool {
		return strings.Contains(coordinatorLog.String(), "worker misconfigured will not run it")
	})
	// Only the good worker is left to take it, once the refusal's delay
	// (5 s) has passed.
	require.NoError(t, bad.cmd.Process.Signal(syscall.SIGTERM))
	_ = bad.cmd.Wait()
	assert.Contains(t, bad.log.String(), "handed back for another worker")
	good := w.startWorker("good", urls, remote, 1)
	require.Equal(t, 0, exitCodeOf(coordinator.Wait()), "coordinator:\n%s\nmisconfigured:\n%s\ngood:\n%s",
		coordinatorLog.String(), bad.log.String(), good.log.String())
	assert.Equal(t, map[string]int{"T1": 1}, w.ralphMerges())
	info, err := runfiles.ReadWorkerInfo(w.dir, "T1")
	require.NoError(t, err)
	assert.Equal(t, "good", info.Worker)
}
