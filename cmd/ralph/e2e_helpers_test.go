package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/scriptagent/script"
)

// workspace is a temporary git repository for one end-to-end test.
type workspace struct {
	t     testing.TB
	dir   string
	state string // the scripted agent's counters and recorded prompts
	// keys are the cluster's keys, for a workspace whose autopilot runs
	// its tasks on workers (newClusterRepo).
	keys *clusterKeys
}

func newWorkspace(t testing.TB) *workspace {
	t.Helper()
	w := &workspace{t: t, dir: t.TempDir(), state: t.TempDir()}
	git(t, w.dir, "init", "-q", ".")
	return w
}

// git runs git in dir as gittest.Run does: a fixed identity, none of the
// user's configuration.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

// closeCommits are the commits on branch that commit ralph's close of
// task in the tracker: "ralph: close <id>", or "ralph: close <id>, <id>"
// for merges that landed together.
func closeCommits(t testing.TB, dir, branch, task string) []string {
	t.Helper()
	var found []string
	for line := range strings.Lines(git(t, dir, "log", "--format=%H %s", branch)) {
		hash, subject, _ := strings.Cut(strings.TrimSpace(line), " ")
		if ids, ok := strings.CutPrefix(subject, "ralph: close "); ok && slices.Contains(strings.Split(ids, ", "), task) {
			found = append(found, hash)
		}
	}
	return found
}

func (w *workspace) write(name, content string) {
	w.t.Helper()
	gittest.WriteFile(w.t, w.dir, name, content)
}

func (w *workspace) read(name string) string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.dir, name))
	require.NoError(w.t, err)
	return string(data)
}

// script writes the scripted agent's script and returns its path.
func (w *workspace) script(sc script.Script) string {
	w.t.Helper()
	path := filepath.Join(w.state, "script.json")
	require.NoError(w.t, sc.WriteFile(path))
	return path
}

// agentCLI is the cli: section that runs the scripted agent.
func agentCLI() string {
	return fmt.Sprintf("cli:\n  backend: command\n  command: %s\n", agentBin)
}

type result struct {
	code   int
	stdout string
	stderr string
}

func (w *workspace) ralph(args ...string) result {
	w.t.Helper()
	return w.ralphEnv(nil, args...)
}

func (w *workspace) ralphEnv(env []string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ralphBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	cmd.Env = append(cmd.Env, env...)
	return runProcess(w.t, cmd)
}

// scriptEnv is the environment of a ralph whose agent is the scripted one,
// its script and counters in state: a confined agent (the autopilot's
// slots and the workers' loops are, by default) may write state too.
func scriptEnv(state string) []string {
	return []string{"SCRIPTAGENT_SCRIPT=" + filepath.Join(state, "script.json"), "SCRIPTAGENT_STATE=" + state,
		SandboxWriteEnv + "=" + state}
}

// runRalph runs ralph with args, in this test's working directory (the
// arguments name the workspace with -C).
func runRalph(t testing.TB, args ...string) result {
	t.Helper()
	return runProcess(t, exec.CommandContext(t.Context(), ralphBin, args...))
}

// runProcess runs cmd to its end and returns its exit code and what it
// printed (into cmd.Stdout and cmd.Stderr as well, when the caller set
// them). A process that cannot be started fails t. Every test that runs a
// process and reads its exit goes through here; exitCodeOf reads the exit
// of one started in the background.
func runProcess(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout = teeTo(&stdout, cmd.Stdout)
	cmd.Stderr = teeTo(&stderr, cmd.Stderr)
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, "%s: %s", cmd.Path, stderr.String())
	}
	return result{code: exitCodeOf(err), stdout: stdout.String(), stderr: stderr.String()}
}

func teeTo(buf *bytes.Buffer, also io.Writer) io.Writer {
	if also == nil {
		return buf
	}
	return io.MultiWriter(buf, also)
}

// exitCodeOf is the exit code of a process that ended with err (from Run or
// Wait): -1 for a signal, -2 when it did not run.
func exitCodeOf(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -2
	}
	return 0
}

// events reads the current run's log.
func (w *workspace) events() []events.Record {
	w.t.Helper()
	rel, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "current-events"))
	require.NoError(w.t, err)
	recs, err := events.NewReader(filepath.Join(w.dir, strings.TrimSpace(string(rel))), 0).Read()
	require.NoError(w.t, err)
	return recs
}

// flow is the run's story without bookkeeping: each routable event as
// "source topic", plus "finished hat outcome" per iteration.
func (w *workspace) flow() []string {
	return flowOf(w.events())
}

func flowOf(recs []events.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Err != nil {
			out = append(out, "malformed")
			continue
		}
		ev := r.Event
		switch ev.Topic {
		case "iteration.finished":
			var p struct{ Hat, Outcome string }
			_ = json.Unmarshal(ev.Payload, &p)
			out = append(out, "finished "+p.Hat+" "+p.Outcome)
		case "loop.terminate":
			var p struct{ Reason string }
			_ = json.Unmarshal(ev.Payload, &p)
			out = append(out, "terminate "+p.Reason)
		case "loop.started", "iteration.started", "iteration.settled", "event.routed", "completion.confirming":
		default:
			out = append(out, ev.Source+" "+ev.Topic)
		}
	}
	return out
}

// prompt returns the prompt the scripted agent got on its n-th run.
func (w *workspace) prompt(n int) string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.state, fmt.Sprintf("prompt-%d.txt", n)))
	require.NoError(w.t, err)
	return string(data)
}

// Script building helpers: the scripted agent's steps are typed, so a
// misspelt key does not compile.
type (
	agentScript   = script.Script
	step          = script.Step
	scriptEmit    = script.Emit
	scriptReplace = script.Replace
)

func say(text string) step { return step{Say: text} }

func tag(topic, payload string) string {
	return fmt.Sprintf(`<event topic="%s">%s</event>`, topic, payload)
}

func emitStep(topic, payload string) step {
	return step{Emit: []script.Emit{{Topic: topic, Payload: payload}}}
}

// ralphShell runs a shell script with $RALPH set to the ralph binary.
func (w *workspace) ralphShell(script string, env ...string) result {
	w.t.Helper()
	cmd := exec.CommandContext(w.t.Context(), "sh", "-c", script)
	cmd.Dir = w.dir
	cmd.Env = append(append(os.Environ(), "RALPH="+ralphBin), env...)
	return runProcess(w.t, cmd)
}

// pidFile is the pid on the first line of the file at path (agent.pgid
// has the agent's start time on its second), 0 when there is none.
func (w *workspace) pidFile(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	n, _ := strconv.Atoi(strings.TrimSpace(first))
	return n
}

const twoHatConfig = `event_loop:
  prompt: Create hello.txt and have it reviewed.
  max_iterations: 12
hats:
  builder:
    name: Builder
    triggers: [build.task]
    publishes: [build.done]
    instructions: Build it.
  reviewer:
    name: Reviewer
    triggers: [build.done]
    publishes: [review.approved]
    instructions: Review it.
`

// twoHatScript: the coordinator hands out the task, the builder writes the
// file and emits build.done, the reviewer approves with a tag, and the
// coordinator claims completion (and confirms it when asked again).
func twoHatScript() agentScript {
	return agentScript{ByHat: map[string][]step{
		"ralph": {
			{WhenFile: map[string]string{"hello.txt": "hello"}, Say: "Verified. " + tag("LOOP_COMPLETE", "hello.txt exists and was reviewed"),
				Else: &step{Say: tag("build.task", "create hello.txt")}},
		},
		"builder":  {{Write: map[string]string{"hello.txt": "hello\n"}, Emit: []scriptEmit{{Topic: "build.done", Payload: "wrote hello.txt"}}}},
		"reviewer": {say("Looks right. " + tag("review.approved", "hello.txt is correct"))},
	}}
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
