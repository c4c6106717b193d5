//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// carrying lists the processes whose environment holds every one of vars
// ("NAME=value"), read from /proc: how a test finds what an agent, a hook
// or a loop left running, wherever it went.
func carrying(t *testing.T, vars ...string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		all := true
		for _, v := range vars {
			all = all && bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+v+"\x00"))
		}
		if all {
			pids = append(pids, pid)
		}
	}
	return pids
}

// leftoverToken is a variable that only this test's processes carry; what
// is left of them is killed when the test ends, passed or not.
func leftoverToken(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: ralph finds the processes that left an agent's group there")
	}
	token := "E2E_LEFTOVER=" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() {
		for _, pid := range carrying(t, token) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return token
}

// An agent that starts a daemon of its own (setsid, and a double fork whose
// middle process exits) leaves nothing running: not at the next iteration,
// not once ralph has exited.
func TestNoLeftoverWhenAnAgentLeavesItsGroup(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	token := leftoverToken(t)
	w.write("ralph.yml", "event_loop:\n  prompt: start a daemon\n  completion_confirmations: 1\n"+agentCLI())
	// Each waits until its daemon has left the group: the agent's group is
	// stopped as soon as it exits.
	w.script(agentScript{Steps: []step{
		{Sh: `setsid sh -c 'echo $$ > "$SCRIPTAGENT_STATE/escapee"; exec sleep 1000' >/dev/null 2>&1 & ` +
			`setsid sh -c 'sleep 1000 >/dev/null 2>&1 & echo $! > "$SCRIPTAGENT_STATE/daemon"' & ` +
			`while [ ! -s "$SCRIPTAGENT_STATE/escapee" ] || [ ! -s "$SCRIPTAGENT_STATE/daemon" ]; do sleep 0.01; done`},
		{
			Sh:  `for f in escapee daemon; do if kill -0 "$(cat "$SCRIPTAGENT_STATE/$f")" 2>/dev/null; then echo "$f alive"; else echo "$f gone"; fi; done > "$SCRIPTAGENT_STATE/seen"`,
			Say: tag("LOOP_COMPLETE", "done"),
		},
	}})
	r := w.ralphEnv([]string{token}, "loop")
	require.Equal(t, 0, r.code, r.stderr)
	seen, err := os.ReadFile(filepath.Join(w.state, "seen"))
	require.NoError(t, err)
	assert.Equal(t, "escapee gone\ndaemon gone\n", string(seen), "the first iteration's daemons were stopped when it ended")
	assert.Empty(t, carrying(t, token), "nothing the agent started runs after ralph exits")
}

// A hook that starts a daemon leaves nothing running either.
func TestNoLeftoverWhenAHookLeavesItsGroup(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	token := leftoverToken(t)
	ran := filepath.Join(w.state, "hook-ran")
	w.write("ralph.yml", "event_loop:\n  prompt: go\n  completion_confirmations: 1\n"+agentCLI()+fmt.Sprintf(`hooks:
  - on: [iteration.started]
    run: setsid sh -c 'touch %[1]s; exec sleep 1000' >/dev/null 2>&1 & while [ ! -e %[1]s ]; do sleep 0.01; done
`, ran))
	w.script(agentScript{Steps: []step{say(tag("LOOP_COMPLETE", "done"))}})
	r := w.ralphEnv([]string{token}, "loop")
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, ran)
	assert.Empty(t, carrying(t, token), "nothing the hook started runs after ralph exits")
}

// An agent stopped mid-iteration, its ralph interrupted (SIGTERM), leaves
// nothing running once ralph has exited: not the daemon it started, which
// left its group and ignores SIGTERM until the grace has passed.
func TestNoLeftoverWhenAnInterruptedAgentLeftItsGroup(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	token := leftoverToken(t)
	w.write("ralph.yml", "event_loop:\n  prompt: start a daemon\n  kill_grace_seconds: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{{Sh: `setsid sh -c 'trap "" TERM; echo $$ > "$SCRIPTAGENT_STATE/escapee"; while :; do sleep 1; done' >/dev/null 2>&1 & ` +
		`while [ ! -s "$SCRIPTAGENT_STATE/escapee" ]; do sleep 0.01; done; exec sleep 1000`}}})
	loop := exec.Command(ralphBin, "loop")
	loop.Dir = w.dir
	loop.Env = append(append(os.Environ(), token), scriptEnv(w.state)...)
	stderr := &lockedWriter{}
	loop.Stderr = stderr
	require.NoError(t, loop.Start())
	t.Cleanup(func() { _ = loop.Process.Kill(); _ = loop.Wait() })
	escapee := filepath.Join(w.state, "escapee")
	waitFor(t, "the agent's daemon", func() bool { return w.pidFile(escapee) > 0 })

	require.NoError(t, loop.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 130, exitCodeOf(loop.Wait()), stderr.String())
	assert.True(t, processGone(w.pidFile(escapee)), "the daemon that left the agent's group")
	assert.Empty(t, carrying(t, token), "nothing the agent started runs after ralph exits")
}

// A worker killed outright (SIGKILL) mid-task takes its loop and agent with
// it, but not what the agent started; the next worker in the same
// directory stops those before it takes the task again, and the task
// completes.
func TestWorkerStopsTheLeftoversOfAKilledWorker(t *testing.T) {
	t.Parallel()
	c := newWorkerCluster(t, agentScript{Steps: []step{{
		Sh: `if [ ! -e "$SCRIPTAGENT_STATE/first" ]; then touch "$SCRIPTAGENT_STATE/first"; ` +
			`setsid sleep 1000 >/dev/null 2>&1 & sleep 1000 >/dev/null 2>&1 & ` +
			`touch "$SCRIPTAGENT_STATE/in-$E2E_WORKER"; sleep 2000; fi`,
		Commit: "the work",
		Say:    tag("LOOP_COMPLETE", "done"),
	}}})
	first := []string{"E2E_WORKER=w1", "SCRIPTAGENT_STATE=" + c.state} // what the first worker's processes carry
	t.Cleanup(func() {
		for _, pid := range carrying(t, first...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	dir := t.TempDir()
	w1 := c.startWorkerIn("w1", dir)
	c.publish(c.task("daemons"))
	waitFor(t, "the first worker's agent", func() bool {
		_, err := os.Stat(filepath.Join(c.state, "in-w1"))
		return err == nil
	})
	require.NoError(t, w1.cmd.Process.Kill())
	w1.wait(t)
	// The loop and its agent die with the worker; their children do not.
	var alive []string
	t.Cleanup(func() {
		if t.Failed() && len(alive) > 0 {
			t.Logf("still alive:\n%s", strings.Join(alive, "\n"))
		}
	})
	waitFor(t, "the first loop and its agent to die with their worker", func() bool {
		alive = alive[:0]
		for _, pid := range carrying(t, first...) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			if bytes.HasPrefix(cmdline, []byte(ralphBin+"\x00")) || bytes.HasPrefix(cmdline, []byte(agentBin+"\x00")) {
				status, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
				alive = append(alive, fmt.Sprintf("%d %q\n%s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), status))
			}
		}
		return len(alive) == 0
	})
	require.Len(t, carrying(t, first...), 4, "the killed worker's agent left its shell and three sleeps running")

	w2 := c.startWorkerIn("w2", dir)
	r := c.nextResult()
	assert.Equal(t, "w2", r.Worker)
	assert.Equal(t, 0, r.ExitCode, "%+v\n%s", r, w2.stderr.String())
	assert.Empty(t, carrying(t, first...), "nothing of the first loop runs")
	assert.Regexp(t, `task daemons: stopped \d+ process\(es\) that its loop left running here when worker process \d+ died`, w2.stderr.String())
}
