//go:build unix

package backends

// Tests of the process runner that need no CLI: most run /bin/sh through
// the command backend, which starts fast and says exactly what it does.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// shell returns a command backend running script with sh -c; the prompt
// becomes $0.
func shell(t *testing.T, script string, opts Options) *Backend {
	t.Helper()
	opts.Name, opts.Command = "command", "/bin/sh"
	opts.Args = []string{"-c", script}
	if opts.KillGrace == 0 {
		opts.KillGrace = 200 * time.Millisecond
	}
	b, err := New(opts)
	require.NoError(t, err)
	return b
}

// runLeaving runs an agent script that starts job in the background and
// prints "done", and returns the result with the pids of the agent and
// the job.
func runLeaving(t *testing.T, job string) (res events.AgentResult, agent, background int, err error) {
	t.Helper()
	pids := filepath.Join(t.TempDir(), "pids")
	script := job + `
echo "$$ $!" > "$PIDS"
echo done`
	res, err = shell(t, script, Options{}).Run(t.Context(), events.AgentRun{
		Dir: t.TempDir(), Env: []string{"PIDS=" + pids},
	}, nil)
	agent, background = readFakePids(t, pids)
	return res, agent, background, err
}

func TestRunKillsWhatTheAgentLeftBehind(t *testing.T) {
	t.Parallel()
	start := time.Now()
	// A background job that ignores SIGTERM and holds stdout open.
	res, agent, grandchild, err := runLeaving(t, `(trap '' TERM; exec sleep 1000) &`)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Minute, "Run must not wait for the leftover (1000s)")
	assert.Equal(t, events.FailureNone, res.Failure, res.FailureMessage)
	assert.Equal(t, "done\n", res.FinalText)

	assertGone(t, -agent, "the agent's process group")
	assertGone(t, grandchild, "the background job")
}

func TestRunStopsReadingPipesHeldOutsideTheGroup(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	start := time.Now()
	res, _, escaped, err := runLeaving(t, `setsid sleep 30 &`)
	t.Cleanup(func() {
		// Out of ralph's reach by design; the test cleans up after itself.
		_ = syscall.Kill(escaped, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(escaped, &ws, 0, nil)
	})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), pipeGrace+20*time.Second, "Run must not wait for the escaped sleep (30s)")
	assert.Equal(t, "done\n", res.FinalText)
}

func TestRunRawOutputKeepsLinesWhole(t *testing.T) {
	t.Parallel()
	script := `i=0
while [ $i -lt 300 ]; do echo "out line $i"; echo "err line $i" >&2; i=$((i+1)); done
printf 'no newline'`
	var raw bytes.Buffer
	_, err := shell(t, script, Options{}).Run(t.Context(), events.AgentRun{Dir: t.TempDir(), RawOutput: &raw}, nil)
	require.NoError(t, err)

	// The unterminated last line gets a newline in the raw log.
	require.True(t, strings.HasSuffix(raw.String(), "\n"))
	lines := strings.Split(strings.TrimSuffix(raw.String(), "\n"), "\n")
	require.Len(t, lines, 601)
	whole := regexp.MustCompile(`^(out|err) line \d+$|^no newline$`)
	for _, l := range lines {
		assert.Regexp(t, whole, l)
	}
	assert.Equal(t, 300, strings.Count(raw.String(), "out line"))
	assert.Equal(t, 300, strings.Count(raw.String(), "err line"))
}

func TestRunFailureQuotesStderrTail(t *testing.T) {
	t.Parallel()
	script := `head -c 20000 /dev/zero | tr '\0' 'x' >&2; echo >&2; echo "final words" >&2; exit 3`
	res, err := shell(t, script, Options{}).Run(t.Context(), events.AgentRun{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, events.FailureExit, res.Failure)
	assert.Equal(t, "command exited with status 3: final words", res.FailureMessage)
}

func TestRunMissingBinary(t *testing.T) {
	t.Parallel()
	b, err := New(Options{Name: "command", Command: "/nonexistent/agent"})
	require.NoError(t, err)
	_, err = b.Run(t.Context(), events.AgentRun{Dir: t.TempDir()}, nil)
	var missing *MissingBinaryError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, "command", missing.Backend)
	assert.Contains(t, err.Error(), `"/nonexistent/agent" not found`)
}

func TestRunMissingWorkspace(t *testing.T) {
	t.Parallel()
	_, err := shell(t, "true", Options{}).Run(t.Context(), events.AgentRun{Dir: "/nonexistent/workspace"}, nil)
	require.Error(t, err)
	var missing *MissingBinaryError
	assert.NotErrorAs(t, err, &missing, "a missing workspace is not a missing binary")
	assert.Contains(t, err.Error(), "start command: workspace")
}

func TestRunAlreadyCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	_, err := shell(t, `touch "$MARKER"`, Options{}).Run(ctx, events.AgentRun{Dir: t.TempDir(), Env: []string{"MARKER=" + marker}}, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, marker, "nothing is started for a cancelled context")
}

func TestRunInterruptReturnsPartialResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	report := func(a events.Activity) {
		if a.Kind == events.ActivityText && a.Text == "partial" {
			cancel()
		}
	}
	res, err := shell(t, `echo partial; exec sleep 1000`, Options{}).Run(ctx, events.AgentRun{Dir: t.TempDir()}, report)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "partial\n", res.FinalText)
	assert.Equal(t, 128+int(syscall.SIGTERM), res.ExitCode)
	assert.Equal(t, events.FailureNone, res.Failure, "an interrupted run's failure is not settled")
}

func TestRunOutputKeepsTheAgentActive(t *testing.T) {
	t.Parallel()
	for _, stream := range []string{"stdout", "stderr"} {
		t.Run(stream, func(t *testing.T) {
			t.Parallel()
			redirect := ""
			if stream == "stderr" {
				redirect = ">&2"
			}
			// It runs for twice the idle limit, printing far more often than
			// the limit, so that only a limit blind to this stream ends it
			// (a loaded machine can delay a tick by a second or two).
			script := fmt.Sprintf(`i=0; while [ $i -lt 30 ]; do echo tick %s; sleep 0.2; i=$((i+1)); done`, redirect)
			res, err := shell(t, script, Options{}).Run(t.Context(), events.AgentRun{
				Dir: t.TempDir(), IdleTimeout: 3 * time.Second,
			}, nil)
			require.NoError(t, err)
			assert.Equal(t, events.FailureNone, res.Failure, res.FailureMessage)
		})
	}
}

func TestRunUnreadPromptOnStdinDoesNotHang(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("p", 4<<20) // far beyond a pipe's buffer
	res, err := shell(t, `echo "ignoring stdin"`, Options{PromptMode: "stdin"}).Run(t.Context(), events.AgentRun{
		Prompt: big, Dir: t.TempDir(), Timeout: time.Minute,
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, events.FailureNone, res.Failure, res.FailureMessage)
	assert.Equal(t, "ignoring stdin\n", res.FinalText)
}

func TestRunPromptOnStdin(t *testing.T) {
	t.Parallel()
	res, err := shell(t, `cat`, Options{PromptMode: "stdin"}).Run(t.Context(), events.AgentRun{
		Prompt: "hello\nworld", Dir: t.TempDir(),
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld", res.FinalText)
}

// testInvocation runs /bin/sh -c script with a parser of the test's choice.
func testInvocation(script string, parse parseFunc) invocation {
	return invocation{
		backend: "test", path: "/bin/sh", args: []string{"-c", script},
		grace: 200 * time.Millisecond, parse: parse, verdict: commandVerdict,
	}
}

func TestRunSurvivesParserPanic(t *testing.T) {
	t.Parallel()
	inv := testInvocation(`echo hi`, func(io.Reader, func(events.Activity), parseEnv) events.AgentResult { panic("odd input") })
	res, err := runProcess(t.Context(), inv, events.AgentRun{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	assert.Equal(t, events.FailureAgent, res.Failure)
	assert.Equal(t, "parse test output: panic: odd input", res.FailureMessage)
}

func TestRunParserThatStopsEarlyDoesNotBlockTheAgent(t *testing.T) {
	t.Parallel()
	inv := testInvocation(`head -c 5000000 /dev/zero; echo; echo finished >&2`,
		func(io.Reader, func(events.Activity), parseEnv) events.AgentResult {
			return events.AgentResult{FinalText: "early"}
		})
	var raw bytes.Buffer
	res, err := runProcess(t.Context(), inv, events.AgentRun{Dir: t.TempDir(), RawOutput: &raw, Timeout: time.Minute}, nil)
	require.NoError(t, err)
	assert.Equal(t, events.FailureNone, res.Failure, res.FailureMessage)
	assert.Equal(t, "early", res.FinalText)
	assert.Equal(t, 5000001+len("finished\n"), raw.Len(), "all of stdout still copied")
	assert.Contains(t, raw.String(), "finished\n")
}

func TestRunWithoutRawOutputOrReport(t *testing.T) {
	t.Parallel()
	res, err := shell(t, `echo ok`, Options{}).Run(t.Context(), events.AgentRun{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	assert.Equal(t, "ok\n", res.FinalText)
}

func TestFeed(t *testing.T) {
	f := newFeed()
	_, _ = f.Write([]byte("ab"))
	_, _ = f.Write([]byte("c"))
	require.NoError(t, f.Close())
	_, _ = f.Write([]byte("late"))
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b), "writes after Close are dropped")

	g := newFeed()
	_, _ = g.Write([]byte("queued"))
	g.drop()
	_, _ = g.Write([]byte("ignored"))
	require.NoError(t, g.Close())
	b, _ = io.ReadAll(g)
	assert.Empty(t, b)
}

func TestExitCodeOfSignal(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "kill -TERM $$")
	_ = cmd.Run()
	assert.Equal(t, 143, exitCode(cmd.ProcessState))
	cmd = exec.Command("/bin/sh", "-c", "exit 7")
	_ = cmd.Run()
	assert.Equal(t, 7, exitCode(cmd.ProcessState))
}

func TestLastLine(t *testing.T) {
	assert.Equal(t, "", lastLine(" \n\n"))
	assert.Equal(t, "b", lastLine("a\nb\n\n"))
	long := strings.Repeat("é", maxMessageLine)
	got := lastLine(long)
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.LessOrEqual(t, len(got), maxMessageLine+len("…"))
	assert.True(t, strings.ToValidUTF8(got, "?") == got, "cut on a rune boundary")
}

func TestRunForceKillSkipsTheGrace(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	force := make(chan struct{})
	report := func(a events.Activity) {
		if a.Kind == events.ActivityText && a.Text == "ready" {
			cancel()                                                      // the first Ctrl-C: SIGTERM, which the agent ignores
			time.AfterFunc(100*time.Millisecond, func() { close(force) }) // the second
		}
	}
	b := shell(t, `trap '' TERM; echo ready; while :; do sleep 0.05; done`, Options{KillGrace: time.Hour})
	start := time.Now()
	res, err := b.Run(ctx, events.AgentRun{Dir: t.TempDir(), ForceKill: force}, report)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), time.Minute, "ForceKill must not wait out an hour's grace")
	assert.Equal(t, 128+int(syscall.SIGKILL), res.ExitCode)
}

func TestRunForceKillAlone(t *testing.T) {
	t.Parallel()
	force := make(chan struct{})
	close(force)
	_, err := shell(t, `exec sleep 1000`, Options{KillGrace: time.Hour}).Run(t.Context(),
		events.AgentRun{Dir: t.TempDir(), ForceKill: force}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "command killed by a forced stop")
}

func TestRunTellsStartedTheGroup(t *testing.T) {
	t.Parallel()
	var started int
	res, err := shell(t, `echo $$`, Options{}).Run(t.Context(), events.AgentRun{
		Dir: t.TempDir(), Started: func(pid int) { started = pid },
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(res.FinalText), fmt.Sprint(started))
	assertGone(t, -started, "the agent's process group")
}
