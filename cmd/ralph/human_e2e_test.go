package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// askConfig: the coordinator hands out the task; the builder asks a person
// first and builds with the answer; the coordinator then completes.
const askConfig = `event_loop:
  prompt: Build it, asking what only a person can decide.
  max_iterations: 10
  completion_confirmations: 1
hats:
  builder:
    name: Builder
    triggers: [build.task]
    publishes: [build.done]
    instructions: Build it.
`

// askScript: the builder's first run asks with args (after `ralph ask`),
// its second writes done.txt; the coordinator completes once it exists.
func askScript(args string) agentScript {
	return agentScript{ByHat: map[string][]step{
		"ralph": {{WhenFile: map[string]string{"done.txt": "done"}, Say: tag("LOOP_COMPLETE", "built"),
			Else: &step{Say: tag("build.task", "go")}}},
		"builder": {
			{Sh: `"$RALPH_BIN" ask "Which database?" --option postgres --option sqlite ` + args},
			{Write: map[string]string{"done.txt": "done\n"}, Say: tag("build.done", "built")},
		},
	}}
}

func (w *workspace) askWorkspace(yml, args string) {
	w.write("ralph.yml", askConfig+yml+agentCLI())
	w.script(askScript(args))
}

// count counts the run's lines with topic.
func (w *workspace) count(topic string) int {
	n := 0
	for _, r := range w.events() {
		if r.Err == nil && r.Event.Topic == topic {
			n++
		}
	}
	return n
}

func (w *workspace) status() runfiles.Status {
	w.t.Helper()
	r := w.ralph("status", "--json")
	require.Equal(w.t, 0, r.code, r.stderr)
	var s runfiles.Status
	require.NoError(w.t, json.Unmarshal([]byte(r.stdout), &s))
	return s
}

func waitForQuestion(t *testing.T, stderr *lockedWriter) {
	t.Helper()
	waitFor(t, "ralph to wait for a person", func() bool { return strings.Contains(stderr.String(), "answer with: ralph answer") })
}

func TestAskWaitsForTheAnswer(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.askWorkspace("", "")
	loop, stderr := w.startRalph("loop")
	waitForQuestion(t, stderr)

	s := w.status()
	require.NotNil(t, s.Waiting, "status --json has waiting_for_human")
	assert.Equal(t, "Which database?", s.Waiting.Text)
	assert.Equal(t, []string{"postgres", "sqlite"}, s.Waiting.Options)
	assert.Equal(t, "builder", s.Waiting.Hat)
	assert.Equal(t, runfiles.PhaseAwaitingHuman, s.Phase)
	text := w.ralph("status")
	assert.Contains(t, text.stdout, "waiting for an answer to "+s.Waiting.ID)

	wrong := w.ralph("answer", "q-nope", "postgres")
	assert.Equal(t, 3, wrong.code)
	assert.Contains(t, wrong.stderr, "question q-nope is not waiting for an answer")
	assert.Contains(t, wrong.stderr, "ralph: hint: answer the pending question with `ralph answer "+s.Waiting.ID)
	assert.Equal(t, 2, w.count("iteration.started"), "no iteration starts while the question waits")

	r := w.ralph("answer", s.Waiting.ID, "postgres, please")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "answered "+s.Waiting.ID+" (")
	require.NoError(t, loop.Wait(), stderr.String())
	assert.Contains(t, stderr.String(), s.Waiting.ID+" answered by cli: postgres, please")
	assert.Equal(t, []string{"ralph task.start", "tag build.task", "finished ralph success", "agent human.asked", "finished builder success",
		"human human.answered", "tag build.done", "finished builder success", "tag LOOP_COMPLETE", "finished ralph success", "terminate completed"}, w.flow())
	next := w.prompt(3)
	assert.Contains(t, next, "from a person")
	assert.Contains(t, next, `"question": "Which database?"`)
	assert.Contains(t, next, `"answer": "postgres, please"`)
	assert.Contains(t, w.prompt(1), " ask \"<question>\"", "the prompt tells the agent how to ask")
	assert.Nil(t, w.status().Waiting)
}

func TestAskSurvivesSIGKILLAndResume(t *testing.T) {
	t.Parallel()
	t.Run("answered while ralph is dead", func(t *testing.T) {
		w := newWorkspace(t)
		w.askWorkspace("", "")
		loop, stderr := w.startRalph("loop")
		waitForQuestion(t, stderr)
		require.NoError(t, loop.Process.Kill())
		_ = loop.Wait()

		s := w.status()
		assert.False(t, s.Running)
		require.NotNil(t, s.Waiting, "the question is still pending")
		r := w.ralph("answer", "sqlite")
		require.Equal(t, 0, r.code, r.stderr)

		r = w.ralph("loop", "--resume")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, w.prompt(3), `"answer": "sqlite"`)
		assert.Equal(t, 4, w.count("iteration.started"), "ralph, builder, builder with the answer, ralph: none repeated")
	})
	t.Run("resumed, then answered", func(t *testing.T) {
		w := newWorkspace(t)
		w.askWorkspace("", "--timeout 10m")
		loop, stderr := w.startRalph("loop")
		waitForQuestion(t, stderr)
		deadline := w.status().Waiting.Deadline
		require.False(t, deadline.IsZero())
		require.NoError(t, loop.Process.Kill())
		_ = loop.Wait()

		resumed, stderr := w.startRalph("loop", "--resume")
		waitForQuestion(t, stderr)
		assert.True(t, deadline.Equal(w.status().Waiting.Deadline), "the resumed run waits for the same moment")
		assert.Equal(t, 2, w.count("iteration.started"))
		r := w.ralph("answer", "sqlite")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, resumed.Wait(), stderr.String())
		assert.Contains(t, w.prompt(3), `"answer": "sqlite"`)
	})
}

func TestAskTimeout(t *testing.T) {
	t.Parallel()
	t.Run("continue", func(t *testing.T) {
		w := newWorkspace(t)
		w.askWorkspace("", "--timeout 1s")
		r := w.ralph("loop")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, ": no answer by the deadline")
		assert.Contains(t, w.prompt(3), "No answer came to your question")
	})
	t.Run("stop", func(t *testing.T) {
		w := newWorkspace(t)
		w.askWorkspace("human:\n  on_timeout: stop\n", "--timeout 1s")
		r := w.ralph("loop")
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "no_answer")
		flow := w.flow()
		assert.Equal(t, []string{"ralph human.timed_out", "terminate no_answer"}, flow[len(flow)-2:])
		assert.Equal(t, 2, w.count("iteration.started"))
	})
}

func TestWaitingRunEndsOnStopAndSignal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		end  func(w *workspace, loop *exec.Cmd)
		code int
	}{
		{"ralph stop", func(w *workspace, _ *exec.Cmd) { require.Equal(t, 0, w.ralph("stop").code) }, 1},
		{"SIGINT", func(_ *workspace, loop *exec.Cmd) { require.NoError(t, loop.Process.Signal(syscall.SIGINT)) }, 130},
		{"SIGTERM", func(_ *workspace, loop *exec.Cmd) { require.NoError(t, loop.Process.Signal(syscall.SIGTERM)) }, 130},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			w.askWorkspace("", "")
			loop, stderr := w.startRalph("loop")
			waitForQuestion(t, stderr)
			tc.end(w, loop)
			assert.Equal(t, tc.code, exitCodeOf(loop.Wait()), stderr.String())
			assert.Equal(t, 2, w.count("iteration.started"))
		})
	}
}

func TestAskHeadless(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.askWorkspace("", "--timeout 10m")
	cmd := exec.Command(ralphBin, "loop", "--headless")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	stdout, stderr := &lockedWriter{}, &lockedWriter{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, "waiting_for_human", func() bool { return strings.Contains(stdout.String(), `"event":"waiting_for_human"`) })

	var waiting struct {
		ID, Question, Hat string
		Options           []string
		Deadline          string
	}
	for line := range strings.Lines(stdout.String()) {
		if strings.Contains(line, `"event":"waiting_for_human"`) {
			require.NoError(t, json.Unmarshal([]byte(line), &waiting))
		}
	}
	assert.NotEmpty(t, waiting.ID)
	assert.Equal(t, "Which database?", waiting.Question)
	assert.Equal(t, []string{"postgres", "sqlite"}, waiting.Options)
	assert.NotEmpty(t, waiting.Deadline)
	// stderr and stdout are separate pipes: the hint may land after the
	// event was read.
	waitFor(t, "the hint to a person reading stderr on how to answer", func() bool {
		return strings.Contains(stderr.String(), "answer with: ralph answer "+waiting.ID)
	})

	require.Equal(t, 0, w.ralph("answer", waiting.ID, "postgres").code)
	require.NoError(t, cmd.Wait(), stderr.String())
	assert.Contains(t, headlessLines(t, stdout.String()), "human_answered")
}
