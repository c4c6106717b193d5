package main

// TestE2EFallback runs a loop whose primary backend, the real Claude Code,
// hits a usage limit an hour away at the scripted model server, and whose
// cli.fallback is the real Codex:
//
//	RALPH_AGENTS_DIR=$PWD/.cache/agents go test -count=1 -run E2EFallback ./cmd/ralph/

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
	"github.com/ralph-loop/ralph/runfiles"
)

// fallbackConfig is the two-hat loop of agentLoopConfig on claude, with
// codex to go on with.
func fallbackConfig(claude, codex string) string {
	return agentLoopConfig + fmt.Sprintf("cli:\n  backend: claude\n  command: %s\n  fallback:\n    - {name: codex, command: %s}\n", claude, codex)
}

// fallbackServer is the scripted model, with Anthropic's API (claude's)
// refused for a usage limit an hour away on the server's clock.
func fallbackServer(t *testing.T) (*fakemodel.Server, string, time.Time) {
	t.Helper()
	srv := fakemodel.New(agentLoopScript("codex"))
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	reset := srv.Now().Add(time.Hour).Truncate(time.Second)
	srv.Limit(fakemodel.APIAnthropic, reset)
	return srv, url, reset
}

func fallbackAgents(t *testing.T) (claude, codex string) {
	t.Helper()
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	return agentBinary(t, dir, "claude"), agentBinary(t, dir, "codex")
}

func TestE2EFallbackOnAUsageLimit(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	claude, codex := fallbackAgents(t)
	srv, url, reset := fallbackServer(t)
	w := newWorkspace(t)
	w.write("ralph.yml", fallbackConfig(claude, codex))

	r := w.ralphAgents(url, nil, "loop", "-c", "ralph.yml")
	t.Logf("exit %d in %s", r.code, r.elapsed.Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})
	require.Equal(t, 0, r.code, "ralph loop exit code; stderr:\n%s", r.stderr)
	assert.Equal(t, agentHello, w.read("hello.txt"), "written by codex, the fallback")

	sw := switchesIn(t, w)
	require.Len(t, sw, 1, "one switch: claude stays out for the rest of the run")
	assert.Equal(t, runfiles.BackendSwitchedRecord{Iteration: 1, Hat: "builder", From: "claude", To: "codex",
		Reason: runfiles.SwitchRateLimit, ResetAt: reset.UTC().Format(time.RFC3339), Message: sw[0].Message}, sw[0])
	assert.Contains(t, sw[0].Message, "usage limit")
	assert.Equal(t, []string{"claude", "codex", "codex"}, startedBackends(t, w), "the same iteration 1 again on codex, then iteration 2")
	assert.Equal(t, []string{
		"ralph task.start", "ralph backend.switched",
		"finished builder rate_limited",
		"agent build.done", "finished builder success",
		"tag LOOP_COMPLETE", "finished reviewer success",
		"terminate completed",
	}, w.flow())
	assert.Equal(t, 5, srv.TurnsUsed())
	assert.Equal(t, 1, countKind(srv, fakemodel.KindLimited), "Claude Code asked once: it does not retry a usage limit")
	assert.Contains(t, r.stderr, "claude → codex: claude is rate-limited until")
}

// The reset passes (on the server's clock and ralph's): the next iteration
// is back on claude.
func TestE2EFallbackBackToThePrimaryAfterItsReset(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	claude, codex := fallbackAgents(t)
	srv, url, _ := fallbackServer(t)
	w := newWorkspace(t)
	w.write("ralph.yml", fallbackConfig(claude, codex))

	// The builder's iteration runs on codex, and the run stops at its limit.
	r := w.ralphAgents(url, nil, "loop", "-c", "ralph.yml", "--max-iterations", "1")
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
		}
	})
	require.Equal(t, 2, r.code, "stopped at --max-iterations 1; stderr:\n%s", r.stderr)

	// Two hours later for both clocks, the run goes on: the reviewer's
	// iteration is claude's again.
	srv.Advance(2 * time.Hour)
	r = w.ralphAgents(url, []string{"RALPH_TEST_CLOCK_OFFSET=2h"}, "loop", "-c", "ralph.yml", "--resume", "--max-iterations", "4")
	require.Equal(t, 0, r.code, "ralph loop --resume exit code; stderr:\n%s", r.stderr)

	sw := switchesIn(t, w)
	require.Len(t, sw, 2)
	assert.Equal(t, runfiles.SwitchRateLimit, sw[0].Reason)
	assert.Equal(t, runfiles.BackendSwitchedRecord{Iteration: 2, Hat: "reviewer", From: "codex", To: "claude",
		Reason: runfiles.SwitchRecovered}, sw[1])
	assert.Equal(t, []string{"claude", "codex", "claude"}, startedBackends(t, w))
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	assert.Equal(t, fakemodel.APIAnthropic, last.API, "the last turn was claude's")
	assert.Equal(t, 5, last.Turn)
}

// ralphAgents runs ralph as ralphAgent does, with every CLI of the chain
// pointed at the fake model (one HOME), and extra variables for ralph.
func (w *workspace) ralphAgents(baseURL string, extra []string, args ...string) agentResult {
	w.t.Helper()
	home, tmp := filepath.Join(w.state, "home"), filepath.Join(w.state, "tmp")
	require.NoError(w.t, os.MkdirAll(home, 0o755))
	require.NoError(w.t, os.MkdirAll(tmp, 0o755))
	env := []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "LANG=C.UTF-8", "TERM=dumb"}
	for _, cli := range []string{"claude", "codex"} {
		e, err := fakemodel.AgentEnv(cli, baseURL, home)
		require.NoError(w.t, err)
		env = append(env, e...)
	}
	ctx, cancel := context.WithTimeout(w.t.Context(), agentLoopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ralphBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append(env, extra...)
	inOwnGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	r := agentResult{result: runProcess(w.t, cmd)}
	r.elapsed = time.Since(start)
	if ctx.Err() != nil {
		w.t.Errorf("ralph loop did not finish within %s", agentLoopTimeout)
	}
	return r
}

func switchesIn(t *testing.T, w *workspace) []runfiles.BackendSwitchedRecord {
	t.Helper()
	var out []runfiles.BackendSwitchedRecord
	for _, rec := range w.events() {
		if rec.Err == nil && rec.Event.Topic == runfiles.TopicBackendSwitched {
			var s runfiles.BackendSwitchedRecord
			require.NoError(t, json.Unmarshal(rec.Event.Payload, &s))
			out = append(out, s)
		}
	}
	return out
}

// startedBackends is the backend of each iteration.started, in order.
func startedBackends(t *testing.T, w *workspace) []string {
	t.Helper()
	var out []string
	for _, rec := range w.events() {
		if rec.Err == nil && rec.Event.Topic == runfiles.TopicIterationStarted {
			var s runfiles.IterationStartedRecord
			require.NoError(t, json.Unmarshal(rec.Event.Payload, &s))
			out = append(out, s.Backend)
		}
	}
	return out
}

func countKind(srv *fakemodel.Server, kind string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Kind == kind {
			n++
		}
	}
	return n
}
