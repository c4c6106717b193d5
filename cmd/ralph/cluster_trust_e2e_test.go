package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot/cluster"
)

// doneAgent does any task in one iteration: it writes <task>.txt, commits
// it and claims completion.
var doneAgent = agentScript{Steps: []step{{
	Sh:     `echo done > "$(basename "$PWD").txt"`,
	Commit: "do the task",
	Say:    tag("LOOP_COMPLETE", "done"),
}}}

// nextResultOf is the next result of task id that is not a refusal.
func (c *workerCluster) nextResultOf(id string) cluster.Result {
	c.t.Helper()
	for {
		if r := c.nextResult(); r.TaskID == id && !r.Refused {
			return r
		}
	}
}

// A task that is not signed (a plain publish on NATS), or is signed by a
// key the worker does not trust, runs nothing on the worker: not its loop,
// not the hook its config carries. A signed task after them runs.
func TestWorkerRunsNothingOfAnUnsignedOrUntrustedTask(t *testing.T) {
	t.Parallel()
	c := newWorkerCluster(t, doneAgent)
	w := c.startWorker("w1")
	hooked := func(id string) cluster.Task {
		task := c.task(id)
		task.Configs = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte(agentCLI() +
			"event_loop:\n  max_iterations: 2\nhooks:\n  - on: [loop.started]\n    run: touch " + filepath.Join(c.state, id+"-hook-ran") + "\n")}}
		return task
	}
	data, err := json.Marshal(hooked("forged"))
	require.NoError(t, err)
	_, err = c.conn.JetStream().Publish(t.Context(), cluster.TaskSubject("forged"), data)
	require.NoError(t, err)
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	stranger, err := cluster.NewSigner(kp)
	require.NoError(t, err)
	require.NoError(t, cluster.PublishTask(t.Context(), c.conn.JetStream(), stranger, hooked("stranger")))

	waitFor(t, "the unsigned task dropped", func() bool {
		return strings.Contains(w.stderr.String(), "dropped the task message on ralph.task.forged, run nothing of it: it is not signed")
	})
	waitFor(t, "the untrusted task refused", func() bool {
		return strings.Contains(w.stderr.String(), "task stranger refused, nothing of it run: it is signed by "+stranger.PublicKey())
	})
	c.publish(c.task("good"))
	r := c.nextResultOf("good")
	assert.Equal(t, 0, r.ExitCode, "%+v", r)

	for _, id := range []string{"forged", "stranger"} {
		assert.NoFileExists(t, filepath.Join(c.state, id+"-hook-ran"), "%s's hook ran", id)
		assert.NoDirExists(t, filepath.Join(w.dir, "tasks", id), "%s was checked out", id)
	}
	assert.DirExists(t, filepath.Join(w.dir, "tasks", "good"))
}

// A signed task whose config has a hook, a command backend and a command
// criterion, and which carries a command of its own, runs none of them on
// a worker that does not trust task commands: the loop runs the worker's
// own agent, and the worker says what it dropped. A worker started with
// --trust-task-commands runs them all.
func TestWorkerRunsATasksCommandsOnlyWhenItTrustsThem(t *testing.T) {
	t.Parallel()
	marks := []string{"hook-ran", "backend-ran", "criterion-ran", "task-command-ran"}
	for _, trust := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trust], func(t *testing.T) {
			c := newWorkerCluster(t, doneAgent)
			mark := func(name string) string { return filepath.Join(c.state, name) }
			backend := filepath.Join(t.TempDir(), "agent.sh")
			require.NoError(t, os.WriteFile(backend, []byte("#!/bin/sh\ntouch "+mark("backend-ran")+"\nexec "+agentBin+" \"$@\"\n"), 0o755))
			task := c.task("t-1")
			task.Configs = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte("cli:\n  backend: command\n  command: " + backend + "\n" +
				"event_loop:\n  max_iterations: 3\n  completion_confirmations: 1\n" +
				"hooks:\n  - on: [loop.started]\n    run: touch " + mark("hook-ran") + "\n" +
				"acceptance_criteria:\n  - type: command_succeeds\n    command: touch " + mark("criterion-ran") + "\n")}}
			task.TaskCommands = []cluster.TaskCommand{{Name: "its own", Command: "touch " + mark("task-command-ran")}}

			var w *workerProc
			if trust {
				w = c.startWorker("w1", "--trust-task-commands")
			} else {
				w = c.startWorker("w1")
			}
			c.publish(task)
			r := c.nextResultOf("t-1")
			require.Equal(t, 0, r.ExitCode, "%+v\n%s", r, w.stderr.String())
			assert.Equal(t, "done", remoteFile(t, c.url, r.Head, "t-1.txt"), "the loop did the task")
			for _, m := range marks {
				if trust {
					assert.FileExists(t, mark(m), "a trusting worker runs the task's commands")
				} else {
					assert.NoFileExists(t, mark(m), "a worker that does not trust task commands ran one")
				}
			}
			if trust {
				return
			}
			log := w.stderr.String()
			assert.Contains(t, log, "task t-1: runs without what it would run on this machine, which does not trust task commands (--trust-task-commands): ")
			for _, dropped := range []string{"hook hook-1 (run: touch " + mark("hook-ran") + ")", "cli (backend command, command " + backend + ")",
				"acceptance_criteria: command_succeeds (touch ", "the task's acceptance command \"touch " + mark("task-command-ran") + "\""} {
				assert.Contains(t, log, dropped)
			}
		})
	}
}

// A worker or a coordinator refuses a NATS server that is not on this
// machine when it has no credentials for it, before it connects or changes
// anything.
func TestClusterRefusesAServerOffThisMachineWithoutCredentials(t *testing.T) {
	t.Parallel()
	keys := newClusterKeys(t)
	r := runRalph(t, append([]string{"worker", "--cluster", "nats://192.0.2.1:4222", "--allow-remote", "/tmp/x.git",
		"--dir", t.TempDir()}, keys.workerArgs()...)...)
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "ralph: error: the NATS server nats://192.0.2.1:4222 is not on this machine, and ralph has no credentials for it")
	assert.Contains(t, r.stderr, "ralph: hint: give the servers an authorization block")
	assert.Contains(t, r.stderr, "--creds FILE")

	w, _ := newClusterRepo(t, "", []string{"T1"})
	prd := w.read("prd.json")
	head := git(t, w.dir, "rev-parse", "HEAD")
	r = w.ralph("autopilot", "--cluster", "nats://nats.example.com:4222")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "the NATS server nats://nats.example.com:4222 is not on this machine")
	assert.Contains(t, r.stderr, "autopilot.cluster.creds")
	assert.Equal(t, prd, w.read("prd.json"), "no task claimed")
	assert.Equal(t, head, git(t, w.dir, "rev-parse", "HEAD"))
}

// ralph cluster keygen writes a seed its owner alone may read, prints only
// the public key, and never replaces a key.
func TestClusterKeygenKeepsTheSeedInItsFile(t *testing.T) {
	t.Parallel()
	seed := filepath.Join(t.TempDir(), "keys", "worker.nk")
	r := runRalph(t, "cluster", "keygen", "worker", "--seed", seed)
	require.Equal(t, 0, r.code, r.stderr)
	pub := strings.TrimSpace(r.stdout)
	assert.Regexp(t, regexp.MustCompile(`^U[A-Z2-7]{55}$`), pub)
	assert.Contains(t, r.stderr, "--trust-worker "+pub)
	info, err := os.Stat(seed)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	data, err := os.ReadFile(seed)
	require.NoError(t, err)
	secret := strings.TrimSpace(string(data))
	assert.True(t, strings.HasPrefix(secret, "SU"))
	assert.NotContains(t, r.stdout+r.stderr, secret, "the seed is never printed")

	r = runRalph(t, "cluster", "pubkey", "worker", "--seed", seed)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, pub+"\n", r.stdout)

	r = runRalph(t, "cluster", "keygen", "worker", "--seed", seed)
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "exists already; ralph never replaces a key")
	again, err := os.ReadFile(seed)
	require.NoError(t, err)
	assert.Equal(t, data, again)

	require.NoError(t, os.Chmod(seed, 0o640))
	r = runRalph(t, "cluster", "pubkey", "worker", "--seed", seed)
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "can be read by others (mode 0640)")
	assert.Contains(t, r.stderr, "ralph: hint: make it readable by you alone: chmod 600 "+seed)

	// By default the key is in ralph's config directory.
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), ralphBin, "cluster", "keygen", "coordinator")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+home)
	r = runProcess(t, cmd)
	require.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(home, "ralph", "coordinator.nk"))
	assert.Contains(t, r.stderr, "--trust-coordinator "+strings.TrimSpace(r.stdout))
}
