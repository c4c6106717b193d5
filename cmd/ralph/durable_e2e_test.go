package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// slowScript keeps the first hat busy long enough for other commands to act.
func slowScript(ms int) agentScript {
	return agentScript{ByHat: map[string][]step{
		"ralph": {{WhenFile: map[string]string{"hello.txt": "hello"}, Say: tag("LOOP_COMPLETE", "done"),
			Else: &step{Say: tag("build.task", "go"), SleepMS: ms}}},
		"builder":  {{Write: map[string]string{"hello.txt": "hello\n"}, Say: tag("build.done", "ok")}},
		"reviewer": {say(tag("review.approved", "ok"))},
	}}
}

// startRalph starts ralph in the background and returns it with its
// captured stderr.
func (w *workspace) startRalph(args ...string) (*exec.Cmd, *lockedWriter) {
	w.t.Helper()
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	require.NoError(w.t, cmd.Start())
	w.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stderr
}

// lockedWriter collects a process's output while a test reads it.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond (a file the loop writes) up to a deadline; the loop is
// another process, so there is nothing to subscribe to.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *workspace) agentRuns() int {
	data, _ := os.ReadFile(filepath.Join(w.state, "runs.count"))
	n := 0
	for _, c := range strings.TrimSpace(string(data)) {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestLockRace20Starts(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(slowScript(1500))

	var wg sync.WaitGroup
	results := make([]result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = w.ralph("loop")
		}()
	}
	wg.Wait()
	ran, refused := 0, 0
	for _, r := range results {
		switch r.code {
		case 0:
			ran++
		case 3:
			refused++
			assert.Contains(t, r.stderr, "another ralph is running in this workspace: pid ")
			assert.Contains(t, r.stderr, "hint:")
		default:
			t.Errorf("unexpected exit %d: %s", r.code, r.stderr)
		}
	}
	assert.Equal(t, 1, ran, "exactly one loop runs")
	assert.Equal(t, 19, refused)
}

func TestLockWaitBlocksUntilFree(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(slowScript(800))
	first, _ := w.startRalph("loop")
	waitFor(t, "the first loop's agent", func() bool { return w.agentRuns() >= 1 })

	r := w.ralph("loop", "--wait")
	require.NoError(t, first.Wait())
	assert.Equal(t, 0, r.code, r.stderr, "the second loop ran after the first released the lock")
}

// A loop started with --wait says what it waits for, and runs once the
// other loop is done.
func TestLockWaitSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	release := filepath.Join(w.state, "release")
	w.agentConfig(`#!/bin/sh
while [ ! -f "`+release+`" ]; do sleep 0.05; done
echo '<event topic="LOOP_COMPLETE">done</event>'
`, "")
	first, _ := w.startRalph("loop")
	waitFor(t, "the first loop's lock", func() bool {
		info, err := runfiles.ReadLockInfo(filepath.Join(w.dir, ".ralph", runfiles.LockFile))
		return err == nil && info.PID == first.Process.Pid
	})

	second, stderr := w.startRalph("loop", "--wait")
	waitFor(t, "the second loop to say it waits", func() bool {
		return strings.Contains(stderr.String(), fmt.Sprintf("waiting for the ralph running in this workspace (pid %d", first.Process.Pid))
	})
	require.NoError(t, os.WriteFile(release, nil, 0o644))
	require.NoError(t, first.Wait())
	require.NoError(t, second.Wait(), stderr.String())
}

func TestStaleLockIsTakenOver(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(slowScript(0))
	w.write(".ralph/loop.lock", `{"run_id":"old","pid":999999,"host":"x","started_at":"2026-01-01T00:00:00Z"}`)

	r := w.ralph("loop")

	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "took over the lock left by pid 999999")
}

func TestCorruptStateIsMovedAsideAndRebuilt(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(string) string{
		"garbage":   func(string) string { return "{not json at all" },
		"truncated": func(s string) string { return s[:len(s)/2] },
		"empty":     func(string) string { return "" },
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", twoHatConfig+agentCLI())
			w.script(twoHatScript())
			r := w.ralphEnv([]string{crashEnv + "=agent.started:2"}, "loop")
			require.Equal(t, -1, r.code, "killed during the second iteration: %s", r.stderr)
			state := w.read(".ralph/state.json")
			w.write(".ralph/state.json", damage(state))

			r = w.ralph("status")
			assert.Equal(t, 3, r.code)
			assert.Contains(t, r.stderr, "ralph: error: corrupt state "+w.dir+"/.ralph/state.json: ")
			assert.Contains(t, r.stderr, "ralph: hint: state.json is only a checkpoint of the event log: `ralph loop --resume` moves it aside",
				"status says how to recover, which the resume below does")
			assert.Equal(t, damage(state), w.read(".ralph/state.json"), "status only reads")

			r = w.ralph("loop", "--resume")

			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stderr, "rebuilding the run from its event log")
			aside, _ := filepath.Glob(filepath.Join(w.dir, ".ralph", "state.corrupt.*.json"))
			require.Len(t, aside, 1, "the bad file is kept")
			kept, _ := os.ReadFile(aside[0])
			assert.Equal(t, damage(state), string(kept), "moved aside byte for byte")
			assert.Equal(t, "hello\n", w.read("hello.txt"))
		})
	}
}

func TestResumeRules(t *testing.T) {
	t.Parallel()
	t.Run("resume with nothing to resume", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", twoHatConfig+agentCLI())
		r := w.ralph("loop", "--resume")
		assert.Equal(t, 3, r.code)
		assert.Contains(t, r.stderr, "no run to resume")
		assert.Contains(t, r.stderr, "hint:")
	})
	t.Run("plain loop over an unfinished run asks for resume or fresh", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", twoHatConfig+agentCLI())
		w.script(twoHatScript())
		require.Equal(t, -1, w.ralphEnv([]string{crashEnv + "=agent.started:2"}, "loop").code)

		r := w.ralph("loop")
		assert.Equal(t, 3, r.code)
		assert.Contains(t, r.stderr, "unfinished")
		assert.Contains(t, r.stderr, "--resume")
		assert.Contains(t, r.stderr, "--fresh")

		old := runID(t, w)
		r = w.ralph("loop", "--fresh")
		require.Equal(t, 0, r.code, r.stderr)
		assert.NotEqual(t, old, runID(t, w))
		assert.FileExists(t, filepath.Join(w.dir, ".ralph", "runs", old, "state.json"), "the old run is archived")
	})
}

func runID(t *testing.T, w *workspace) string {
	var s struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(w.read(".ralph/state.json")), &s))
	return s.RunID
}

func TestStopAndStatus(t *testing.T) {
	t.Parallel()
	for _, now := range []bool{false, true} {
		name := "at the boundary"
		if now {
			name = "now"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", twoHatConfig+agentCLI())
			w.script(slowScript(3000))
			loop, stderr := w.startRalph("loop")
			waitFor(t, "the agent to start", func() bool { return w.agentRuns() >= 1 })

			st := w.ralph("status", "--json")
			require.Equal(t, 0, st.code, st.stderr)
			var status struct {
				Running bool   `json:"running"`
				PID     int    `json:"pid"`
				Hat     string `json:"hat"`
			}
			require.NoError(t, json.Unmarshal([]byte(st.stdout), &status))
			assert.True(t, status.Running)
			assert.Equal(t, loop.Process.Pid, status.PID)
			assert.Equal(t, "ralph", status.Hat)

			args := []string{"stop"}
			if now {
				args = append(args, "--now")
			}
			require.Equal(t, 0, w.ralph(args...).code)
			err := loop.Wait()
			assert.Equal(t, 1, exitCodeOf(err), stderr.String())
			assert.Contains(t, stderr.String(), "stopped")
			if now {
				assert.Contains(t, w.flow(), "finished ralph interrupted")
			} else {
				assert.Contains(t, w.flow(), "finished ralph success")
			}

			st = w.ralph("status")
			assert.Contains(t, st.stdout, "running: no")
			assert.Contains(t, st.stdout, "ended: stopped")

			r := w.ralph("loop", "--resume")
			assert.Equal(t, 0, r.code, r.stderr)
		})
	}
}
