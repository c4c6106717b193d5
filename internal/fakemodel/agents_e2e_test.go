//go:build unix

package fakemodel_test

// These tests drive the real agent CLIs, installed by
//
//	bash internal/agents/install.sh .cache/agents   (or: make agents)
//	RALPH_AGENTS_DIR=$PWD/.cache/agents go test ./internal/fakemodel -run Agents -v
//
// against the fake model server. Without RALPH_AGENTS_DIR they are skipped;
// with it, a missing CLI is a failure, so CI cannot silently test nothing.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

const (
	helloPrompt = "Create hello.txt containing hello, then append a line hi."
	// agentTimeout bounds one CLI run: most take 1-10s on 2 idle cores, but
	// over a minute was seen when the machine was busy.
	agentTimeout = 4 * time.Minute
)

func helloScript() fakemodel.Script {
	return fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "I will create hello.txt.", Tools: []fakemodel.ToolCall{
			{Write: &fakemodel.WriteCall{Path: "hello.txt", Content: "hello\n"}}}},
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "echo hi >> hello.txt"}}}},
		{Text: "Created hello.txt and appended a line.\n<event topic=\"build.done\">tests: pass</event>"},
	}}
}

func TestAgentsToolLoop(t *testing.T) {
	dir := agentsDir(t)
	for _, cli := range fakemodel.Agents {
		t.Run(cli, func(t *testing.T) {
			// Each run has its own server, workdir, HOME and TMPDIR, so the
			// CLIs run side by side (-parallel, GOMAXPROCS by default):
			// much of a run is the CLI waiting on its own start-up and
			// shells, not computing.
			t.Parallel()
			bin := agentBinary(t, dir, cli)
			srv := startServer(t, helloScript())
			run := runAgent(t, bin, cli, srv.url, helloPrompt)
			t.Logf("%s: exit %d in %s", cli, run.exit, run.elapsed.Round(100*time.Millisecond))
			dumpOnFailure(t, run)

			assert.Equal(t, 0, run.exit, "exit code")
			assert.Equal(t, "hello\nhi\n", readFile(t, filepath.Join(run.workdir, "hello.txt")))
			assert.Contains(t, run.stdout, "build.done")
			assert.Equal(t, 3, srv.TurnsUsed(), "script turns consumed")
			for _, r := range srv.Requests() {
				assert.False(t, r.Exhausted, "request %d got past the end of the script", r.Seq)
			}
		})
	}
}

// TestAgentsAPIError checks that every CLI understands the server's error
// shape for its API: the scripted message reaches its output, and the exit
// code is what docs/agent-clis.md#testing-against-the-fake-model records (pi and Qwen Code exit 0 on API errors;
// Gemini CLI exits with the HTTP status modulo 256).
func TestAgentsAPIError(t *testing.T) {
	dir := agentsDir(t)
	wantExit := map[string]int{"claude": 1, "codex": 1, "gemini": 400 % 256, "opencode": 1, "pi": 0, "qwen": 0, "copilot": 1}
	for _, cli := range fakemodel.Agents {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			bin := agentBinary(t, dir, cli)
			srv := startServer(t, fakemodel.Script{Turns: []fakemodel.Turn{
				{Error: &fakemodel.ErrorTurn{Status: 400, Message: "fakemodel scripted failure"}},
			}})
			run := runAgent(t, bin, cli, srv.url, "Say hello.")
			t.Logf("%s: exit %d in %s", cli, run.exit, run.elapsed.Round(100*time.Millisecond))
			dumpOnFailure(t, run)

			assert.Equal(t, wantExit[cli], run.exit, "exit code")
			assert.Contains(t, run.stdout+run.stderr, "fakemodel scripted failure")
			assert.Equal(t, 1, srv.TurnsUsed(), "a 400 is not retried")
		})
	}
}

// TestAgentsContinueAcrossProcesses runs two fresh sessions of one CLI
// against one server, as ralph's loop does: the second continues the script
// where the first stopped. Claude Code and pi are the fastest CLIs (about a
// second a run) and cover the Anthropic and Chat Completions APIs.
func TestAgentsContinueAcrossProcesses(t *testing.T) {
	dir := agentsDir(t)
	for _, cli := range []string{"claude", "pi"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			bin := agentBinary(t, dir, cli)
			srv := startServer(t, fakemodel.Script{Turns: []fakemodel.Turn{
				{Tools: []fakemodel.ToolCall{{Write: &fakemodel.WriteCall{Path: "step1.txt", Content: "one\n"}}}},
				{Text: "Step 1 done. <event topic=\"build.task\">step 2</event>"},
				{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "cat step1.txt > step2.txt && echo two >> step2.txt"}}}},
				{Text: "Step 2 done. LOOP_COMPLETE"},
			}})
			workdir := t.TempDir()

			first := runAgentIn(t, bin, cli, srv.url, workdir, "Do the next task.")
			dumpOnFailure(t, first)
			require.Equal(t, 0, first.exit)
			assert.Contains(t, first.stdout, "build.task")
			assert.Equal(t, "one\n", readFile(t, filepath.Join(workdir, "step1.txt")))
			require.Equal(t, 2, srv.TurnsUsed(), "the first run uses turns 1-2")

			second := runAgentIn(t, bin, cli, srv.url, workdir, "Do the next task.")
			dumpOnFailure(t, second)
			require.Equal(t, 0, second.exit)
			assert.Contains(t, second.stdout, "LOOP_COMPLETE")
			assert.Equal(t, "one\ntwo\n", readFile(t, filepath.Join(workdir, "step2.txt")))
			assert.Equal(t, 4, srv.TurnsUsed(), "the second run uses turns 3-4")
			t.Logf("%s: runs took %s and %s", cli, first.elapsed.Round(100*time.Millisecond), second.elapsed.Round(100*time.Millisecond))
		})
	}
}

func agentsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make agents` (internal/agents/install.sh) and set it to the install folder to test the real agent CLIs")
	}
	return dir
}

func agentBinary(t *testing.T, dir, cli string) string {
	t.Helper()
	bin := filepath.Join(dir, cli, "node_modules", ".bin", cli)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not installed at %s (RALPH_AGENTS_DIR=%s): run `make agents` (bash internal/agents/install.sh %s)", cli, bin, dir, dir)
	}
	return bin
}

type testServer struct {
	*fakemodel.Server
	url string
}

func startServer(t *testing.T, script fakemodel.Script) testServer {
	t.Helper()
	srv := fakemodel.New(script)
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() {
		t.Logf("requests:\n%s", srv.Transcript())
		_ = srv.Close()
	})
	return testServer{Server: srv, url: url}
}

type agentRun struct {
	workdir        string
	stdout, stderr string
	exit           int
	elapsed        time.Duration
}

func runAgent(t *testing.T, bin, cli, baseURL, prompt string) agentRun {
	return runAgentIn(t, bin, cli, baseURL, t.TempDir(), prompt)
}

// runAgentIn runs one CLI headlessly in workdir with a fresh HOME and TMPDIR
// and stdin from /dev/null, in its own process group so a timeout kills the
// whole tree (the CLIs spawn shells and helper processes).
func runAgentIn(t *testing.T, bin, cli, baseURL, workdir, prompt string) agentRun {
	t.Helper()
	scratch := t.TempDir()
	home, tmp := filepath.Join(scratch, "home"), filepath.Join(scratch, "tmp")
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.MkdirAll(tmp, 0o755))
	env, err := fakemodel.AgentEnv(cli, baseURL, home)
	require.NoError(t, err)
	args, err := fakemodel.AgentArgs(cli, prompt)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = workdir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "LANG=C.UTF-8", "TERM=dumb"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// cmd.Stdin stays nil: os/exec then reads from /dev/null.

	start := time.Now()
	err = cmd.Run()
	run := agentRun{workdir: workdir, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		run.exit = exitErr.ExitCode()
	default:
		t.Fatalf("run %s: %v", cli, err)
	}
	if ctx.Err() != nil {
		t.Errorf("%s timed out after %s", cli, agentTimeout)
	}
	// Some CLIs leave helpers behind (MCP, LSP, shells); do not let them
	// outlive the test.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return run
}

// dumpOnFailure shows what the CLI printed when the test fails; with the
// request log (logged by startServer) that is what it takes to see why.
func dumpOnFailure(t *testing.T, run agentRun) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("stdout:\n%s", tail(run.stdout, 6000))
		t.Logf("stderr:\n%s", tail(run.stderr, 4000))
	})
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return "<" + strings.TrimSpace(err.Error()) + ">"
	}
	return string(data)
}
