//go:build unix

package backends

// The conformance suite: every registered backend (every entry of clis)
// runs the same subtests against the fake agent (fakeagent_test.go), which
// replays a recorded stream of that CLI. The backend's spec builds its real
// command line, but Options.Command points it at the fake, so what is
// tested is the spec's arguments and environment, the runner, the CLI's
// parser and its verdict, end to end.
//
// # How a CLI joins
//
// Either drop its recorded output into testdata/<name>/ under the names the
// other recordings use (backends/testdata/README.md#recorded-files) — <format>-tool-loop.jsonl for a successful turn (it
// writes a file, runs a shell command and ends with LOOP_COMPLETE) and
// <format>-api-error-400.jsonl for a failed one, with an optional
// <format>-api-error-400.stderr.txt — or, to say more (a different exit
// status, the exact failure kind), add an entry from the CLI's own test
// file:
//
//	func init() {
//		conformanceCases["codex"] = conformanceCase{
//			Normal: "codex/exec-json-tool-loop.jsonl", NormalTools: true,
//			Error: "codex/exec-json-api-error-400.jsonl", ErrorExit: 1,
//			ErrorFailure: events.FailureAgent,
//		}
//	}
//
// A registered CLI with neither is skipped with a note.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// recordedErrorExit is the exit status each CLI gave in the api-error-400
// recordings (backends/testdata/README.md#scenarios), for CLIs that join
// by file name alone. Others are assumed to exit 1.
var recordedErrorExit = map[string]int{
	"claude": 1, "codex": 1, "gemini": 144, "opencode": 1, "pi": 0, "qwen": 0, "copilot": 1,
}

// conformanceCaseFor returns a CLI's entry, or one built from the files in
// testdata/<name>/, and false when there is neither.
func conformanceCaseFor(name string) (conformanceCase, bool) {
	if c, ok := conformanceCases[name]; ok {
		return c, true
	}
	normal := globOne(name, "*-tool-loop.jsonl")
	errTurn := globOne(name, "*-api-error-400.jsonl")
	if normal == "" || errTurn == "" {
		return conformanceCase{}, false
	}
	exit, ok := recordedErrorExit[name]
	if !ok {
		exit = 1
	}
	c := conformanceCase{Normal: normal, NormalTools: true, Error: errTurn, ErrorExit: exit}
	if stderr := strings.TrimSuffix(errTurn, ".jsonl") + ".stderr.txt"; fileExists(filepath.Join("testdata", stderr)) {
		c.ErrorStderr = stderr
	}
	return c, true
}

func globOne(dir, pattern string) string {
	matches, _ := filepath.Glob(filepath.Join("testdata", dir, pattern))
	if len(matches) == 0 {
		return ""
	}
	rel, _ := filepath.Rel("testdata", matches[0])
	return rel
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestConformance(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, ok := conformanceCaseFor(name)
			if !ok {
				t.Skipf("no recorded stream for %s: add testdata/%s/<format>-tool-loop.jsonl and -api-error-400.jsonl, or a conformanceCases entry", name, name)
			}
			s := conformanceSuite{name: name, c: c}
			t.Run("normal turn", s.normalTurn)
			t.Run("error turn", s.errorTurn)
			t.Run("exit status reported", s.exitStatus)
			t.Run("cancellation kills the process group", s.cancellation)
			t.Run("idle timeout", s.idleTimeout)
			t.Run("iteration timeout", s.iterationTimeout)
			t.Run("env and cwd reach the agent", s.envAndCwd)
			t.Run("prompt as argument, stdin closed", s.promptAsArg)
			t.Run("prompt on stdin", s.promptOnStdin)
			t.Run("a prompt too long for an argument is not one", s.longPrompt)
			t.Run("secrets are redacted in a normal turn", s.secretsRedactedNormal)
			t.Run("secrets are redacted in an error turn", s.secretsRedactedError)
		})
	}
}

type conformanceSuite struct {
	name string
	c    conformanceCase
}

// backend returns the CLI's backend pointed at the fake agent.
func (s conformanceSuite) backend(t *testing.T, opts Options) *Backend {
	t.Helper()
	opts.Name = s.name
	opts.Command = fakeAgentPath(t)
	if opts.KillGrace == 0 {
		opts.KillGrace = fakeGrace
	}
	b, err := New(opts)
	require.NoError(t, err)
	return b
}

func (s conformanceSuite) normalTurn(t *testing.T) {
	t.Parallel()
	var acts activities
	b := s.backend(t, Options{})
	res, err := b.Run(t.Context(), events.AgentRun{
		Prompt: "Create hello.txt",
		Dir:    t.TempDir(),
		Env:    fakeEnv("STDOUT", absTestdata(t, s.c.Normal)),
	}, acts.report)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, events.FailureNone, res.Failure, res.FailureMessage)
	assert.Contains(t, res.FinalText, "LOOP_COMPLETE")
	assert.Positive(t, res.Duration)
	if s.c.NormalTools {
		assert.GreaterOrEqual(t, res.Tools.Write, 1, "write tool uses")
		assert.GreaterOrEqual(t, res.Tools.Shell, 1, "shell tool uses")
		assert.Positive(t, acts.count(events.ActivityTool), "tool activity reported")
	}
}

func (s conformanceSuite) errorTurn(t *testing.T) {
	t.Parallel()
	env := fakeEnv("STDOUT", absTestdata(t, s.c.Error), "EXIT", strconv.Itoa(s.c.ErrorExit))
	if s.c.ErrorStderr != "" {
		env = append(env, "FAKE_AGENT_STDERR="+absTestdata(t, s.c.ErrorStderr))
	}
	res, err := s.backend(t, Options{}).Run(t.Context(), events.AgentRun{
		Prompt: "Say hello.", Dir: t.TempDir(), Env: env,
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, s.c.ErrorExit, res.ExitCode)
	assert.True(t, res.Failed(), "failure %q", res.Failure)
	assert.NotEmpty(t, res.FailureMessage)
	if s.c.ErrorFailure != "" {
		assert.Equal(t, s.c.ErrorFailure, res.Failure, res.FailureMessage)
	}
}

func (s conformanceSuite) exitStatus(t *testing.T) {
	t.Parallel()
	res, err := s.backend(t, Options{}).Run(t.Context(), events.AgentRun{
		Prompt: "Create hello.txt",
		Dir:    t.TempDir(),
		Env:    fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "EXIT", "3"),
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.True(t, res.Failed(), "a non-zero exit must fail the run, got %q", res.Failure)
}

func (s conformanceSuite) cancellation(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	type outcome struct {
		res events.AgentResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.backend(t, Options{}).Run(ctx, events.AgentRun{
			Prompt: "Create hello.txt",
			Dir:    t.TempDir(),
			Env: fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "PIDS", pids,
				"GRANDCHILD", "1", "IGNORE_TERM", "1", "SLEEP", "1h"),
		}, nil)
		done <- outcome{res, err}
	}()
	agent, grandchild := readFakePids(t, pids)
	require.NotZero(t, grandchild)
	cancel()
	stopped := time.Now()

	var got outcome
	select {
	case got = <-done:
	case <-time.After(fakeGrace + time.Minute):
		t.Fatal("Run did not return after cancellation (the agent sleeps an hour)")
	}
	assert.Less(t, time.Since(stopped), fakeGrace+time.Minute)
	require.ErrorIs(t, got.err, context.Canceled)
	assert.Equal(t, 128+int(syscall.SIGKILL), got.res.ExitCode, "the agent ignores SIGTERM, so SIGKILL ends it")
	assertGone(t, -agent, "the agent's process group")
	assertGone(t, grandchild, "the grandchild")
}

// assertGone asserts that kill(pid, 0) finds no process (pid < 0: group).
func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	err := syscall.Kill(pid, 0)
	assert.True(t, errors.Is(err, syscall.ESRCH), "%s (%d) still exists: kill(0) = %v", what, pid, err)
}

func (s conformanceSuite) idleTimeout(t *testing.T) {
	t.Parallel()
	var agent int
	res, err := s.backend(t, Options{}).Run(t.Context(), events.AgentRun{
		Prompt:      "Create hello.txt",
		Dir:         t.TempDir(),
		Env:         fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "SLEEP", "1h"),
		Timeout:     time.Minute,
		IdleTimeout: 300 * time.Millisecond,
		Started:     func(pid int) { agent = pid },
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, events.FailureIdle, res.Failure)
	assert.Contains(t, res.FailureMessage, "300ms")
	assert.Equal(t, 128+int(syscall.SIGTERM), res.ExitCode)
	require.NotZero(t, agent)
	assertGone(t, -agent, "the agent's process group")
}

func (s conformanceSuite) iterationTimeout(t *testing.T) {
	t.Parallel()
	// A busy agent that ignores SIGTERM: the limit must still end it.
	res, err := s.backend(t, Options{}).Run(t.Context(), events.AgentRun{
		Prompt:  "Create hello.txt",
		Dir:     t.TempDir(),
		Env:     fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "SLEEP", "1h", "TICK", "50ms", "IGNORE_TERM", "1"),
		Timeout: 700 * time.Millisecond,
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, events.FailureTimeout, res.Failure)
	assert.Contains(t, res.FailureMessage, "700ms")
	// SIGKILL, unless a loaded machine started the fake so slowly that
	// SIGTERM came before it could ignore it.
	assert.Contains(t, []int{128 + int(syscall.SIGKILL), 128 + int(syscall.SIGTERM)}, res.ExitCode)
	assert.Less(t, res.Duration, 700*time.Millisecond+fakeGrace+time.Minute, "the agent sleeps an hour")
}

func (s conformanceSuite) envAndCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record := filepath.Join(t.TempDir(), "record.json")
	b := s.backend(t, Options{Env: map[string]string{"FAKE_FROM_OPTS": "opts", "FAKE_BOTH": "opts"}})
	env := append(fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "RECORD", record), "FAKE_FROM_RUN=run", "FAKE_BOTH=run")
	_, err := b.Run(t.Context(), events.AgentRun{Prompt: "Create hello.txt", Dir: dir, Env: env}, nil)
	require.NoError(t, err)

	rec := readFakeRecord(t, record)
	assert.Equal(t, realPath(t, dir), realPath(t, rec.Cwd))
	assert.Equal(t, "opts", rec.Env["FAKE_FROM_OPTS"])
	assert.Equal(t, "run", rec.Env["FAKE_FROM_RUN"])
	assert.Equal(t, "run", rec.Env["FAKE_BOTH"], "AgentRun.Env wins over Options.Env")
	assert.Equal(t, os.Getenv("PATH"), rec.Env["PATH"], "ralph's own environment is inherited")
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

func (s conformanceSuite) promptAsArg(t *testing.T) {
	t.Parallel()
	s.promptDelivery(t, "arg")
}

func (s conformanceSuite) promptOnStdin(t *testing.T) {
	t.Parallel()
	s.promptDelivery(t, "stdin")
}

// longPrompt runs a 200 KB prompt, longer than Linux lets one argument be
// (128 KiB), in every prompt mode: the agent starts, no argument is longer
// than maxArgPrompt, and the prompt is all on stdin, or, for a program that
// may not read stdin (the command backend given it as an argument), cut to
// its beginning and end. When that is not where the mode says the prompt
// goes, a warning says so.
func (s conformanceSuite) longPrompt(t *testing.T) {
	t.Parallel()
	prompt := "HEAD-MARK " + strings.Repeat("a long test log line\n", 200_000/21) + " TAIL-MARK"
	for _, mode := range []string{"", "arg", "stdin"} {
		t.Run("prompt_mode "+cmp.Or(mode, "default"), func(t *testing.T) {
			record := filepath.Join(t.TempDir(), "record.json")
			b := s.backend(t, Options{PromptMode: mode})
			var warnings []string
			_, err := b.Run(t.Context(), events.AgentRun{
				Prompt: prompt,
				Dir:    t.TempDir(),
				Env:    fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "RECORD", record),
			}, func(a events.Activity) {
				if a.Kind == events.ActivityWarning {
					warnings = append(warnings, a.Text)
				}
			})
			require.NoError(t, err, "the agent starts")

			rec := readFakeRecord(t, record)
			for _, a := range rec.Args {
				assert.LessOrEqual(t, len(a), maxArgPrompt, "no argument is longer than maxArgPrompt")
			}
			d := deliver(b.spec, b.opts, prompt)
			if d.onStdin {
				assert.Equal(t, prompt, rec.Stdin, "the whole prompt on stdin")
			} else {
				require.Equal(t, nameCommand, s.name, "only the command backend's program may get a cut prompt")
				arg := rec.Args[len(rec.Args)-1]
				assert.True(t, strings.HasPrefix(arg, "HEAD-MARK "), "the prompt's beginning")
				assert.True(t, strings.HasSuffix(arg, " TAIL-MARK"), "the prompt's end")
				assert.Contains(t, arg, "bytes of this prompt are left out here")
				assert.True(t, rec.StdinDevNull)
			}
			usual := mode == "stdin" || (mode == "" && b.spec.stdin == stdinAlways)
			if usual {
				assert.Empty(t, warnings)
			} else {
				require.Len(t, warnings, 1, "a warning says the prompt did not go where prompt_mode says")
				assert.Contains(t, warnings[0], "too long for a command-line argument")
			}
		})
	}
}

// promptDelivery checks that the prompt reaches the agent where the spec
// says it goes for mode, and that stdin is /dev/null when it is not the
// prompt. Some CLIs take the prompt in one place only, whatever the mode.
func (s conformanceSuite) promptDelivery(t *testing.T, mode string) {
	const prompt = "Create hello.txt containing hello"
	record := filepath.Join(t.TempDir(), "record.json")
	b := s.backend(t, Options{PromptMode: mode})
	_, err := b.Run(t.Context(), events.AgentRun{
		Prompt: prompt,
		Dir:    t.TempDir(),
		Env:    fakeEnv("STDOUT", absTestdata(t, s.c.Normal), "RECORD", record),
	}, nil)
	require.NoError(t, err)

	rec := readFakeRecord(t, record)
	if deliver(b.spec, b.opts, prompt).onStdin {
		assert.Equal(t, prompt, rec.Stdin)
		assert.NotContains(t, rec.Args, prompt)
		return
	}
	assert.True(t, rec.StdinDevNull, "stdin must be /dev/null when the prompt is an argument")
	assert.Empty(t, rec.Stdin)
	assert.True(t, slices.Contains(rec.Args, prompt), "prompt among the arguments %q", rec.Args)
}

// readFakePids waits until the fake agent has written its pids file and
// returns its own pid (its process group) and its grandchild's.
func readFakePids(t *testing.T, path string) (agent, grandchild int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if _, err := fmt.Sscan(string(b), &agent, &grandchild); err != nil {
				t.Fatalf("parse pids file %q: %v", b, err)
			}
			return agent, grandchild
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake agent wrote no pids file: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
