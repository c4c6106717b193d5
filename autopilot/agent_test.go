package autopilot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// A task's loop runs with the agent the task names, and only that task's.
func TestATaskRunsWithTheAgentItNames(t *testing.T) {
	h := newHarness(t, named(task("a", 1), "codex", "gpt-5"), task("b", 2))
	h.start(t.Context(), h.settings(1))
	a := h.loop()
	assert.Equal(t, Agent{Backend: "codex", Model: "gpt-5"}, a.job.Agent)
	a.complete()
	b := h.loop()
	assert.True(t, b.job.Agent.IsZero(), "a task that names no agent runs the config's: %+v", b.job.Agent)
	b.complete()
	assert.Equal(t, 2, h.wait().Completed)
}

// A restarted autopilot starts a task's loop again from its task files:
// the agent is one of them.
func TestTheAgentIsReadBackFromTheTaskFiles(t *testing.T) {
	h := newHarness(t, named(task("a", 1), "", "opus"))
	h.start(t.Context(), h.settings(1))
	l := h.loop()
	job, err := h.autopilotJob(l.job.Task)
	require.NoError(t, err)
	assert.Equal(t, Agent{Model: "opus"}, job.Agent)

	// A file an agent could have rewritten is checked again.
	path := filepath.Join(h.repo, ".ralph", runfiles.TasksDir, "a", runfiles.AgentFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"model":"--yolo"}`), 0o600))
	_, err = h.autopilotJob("a")
	assert.ErrorContains(t, err, `model "--yolo" starts with "-"`)
	l.complete()
	h.wait()
}

// A task naming an agent that cannot be used fails before it is claimed,
// saying why and where to correct it; the others run.
func TestATaskNamingAnUnusableAgentFailsAndTheOthersRun(t *testing.T) {
	for name, c := range map[string]struct {
		task tasks.Task
		says string
	}{
		"a flag as model":     {named(task("bad", 1), "", "--dangerously-skip-permissions"), `model "--dangerously-skip-permissions" starts with "-"`},
		"a model with spaces": {named(task("bad", 1), "", "a b"), `model "a b" contains ' '`},
		"an unknown backend":  {named(task("bad", 1), "bash", ""), `names backend "bash", which is not an agent CLI ralph knows: name one of claude, codex`},
		"the command backend": {named(task("bad", 1), "command", ""), `names backend "command", which is not an agent CLI`},
		"two models":          {named(task("bad", 1, "model:haiku"), "", "opus"), `names 2 models, "opus" and "haiku": keep one`},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, c.task, task("ok", 2))
			h.start(t.Context(), h.settings(1))
			failed := payloadOf(h.next(runfiles.TopicTaskAssignFailed))
			assert.Equal(t, "bad", failed.Task)
			assert.Contains(t, failed.Reason, c.says)
			assert.Contains(t, failed.Reason, "correct it in mem")
			h.loop().complete()
			res := h.wait()
			assert.Equal(t, 1, res.Completed)
			assert.Equal(t, 1, res.Failed)
			assert.Zero(t, h.source.claimed["bad"], "nothing of the task was started")
			assert.Equal(t, "not started: "+failed.Reason, h.source.failed["bad"])
		})
	}
}

// The local runner hands the agent to `ralph loop` as flags.
func TestTheLocalRunnerPassesTheAgentAsFlags(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "ralph")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$PWD/args\"\n"), 0o755))
	for name, c := range map[string]struct {
		agent Agent
		mode  runfiles.StartMode
		want  []string
	}{
		"new":          {Agent{Backend: "claude", Model: "opus"}, runfiles.StartNew, []string{"-P", "obj.md", "--backend", "claude", "--model", "opus"}},
		"resumed":      {Agent{Model: "opus"}, runfiles.StartResume, []string{"--resume", "--model", "opus"}},
		"the config's": {Agent{}, runfiles.StartNew, []string{"-P", "obj.md"}},
	} {
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			job := Job{Task: "a", Dir: work, Overlay: "task.yml", ObjectiveFile: "obj.md", Mode: c.mode, Agent: c.agent,
				Output: filepath.Join(t.TempDir(), "loop.log")}
			h, err := LocalRunner{Ralph: fake}.Start(t.Context(), job)
			require.NoError(t, err)
			h.Wait()
			data, err := os.ReadFile(filepath.Join(work, "args"))
			require.NoError(t, err)
			args := strings.Fields(string(data))
			assert.Equal(t, append([]string{"loop", "--quiet", "-c", "task.yml"}, c.want...), args)
		})
	}
}

// The dry run's plan shows a task's agent, and one it cannot use as a
// failure.
func TestThePlanShowsEachTasksAgent(t *testing.T) {
	src := newMemSource(t.TempDir(), named(task("a", 1), "claude", "opus"), named(task("b", 2), "", "a b"), task("c", 3))
	p, err := MakePlan(t.Context(), src, 2, 0)
	require.NoError(t, err)
	require.Len(t, p.Tasks, 3)
	assert.Equal(t, "backend claude, model opus", Agent{Backend: p.Tasks[0].Task.Backend, Model: p.Tasks[0].Task.Model}.String())
	assert.Empty(t, p.Tasks[0].Invalid)
	assert.Contains(t, p.Tasks[1].Invalid, `model "a b" contains ' '`)
	assert.Empty(t, p.Tasks[1].Slot)
	assert.Equal(t, "2", p.Tasks[2].Slot, "the task that would fail takes no slot")
}

// named is t naming backend and model, as a source reads them.
func named(t tasks.Task, backend, model string) tasks.Task {
	t.Backend, t.Model = backend, model
	return t
}

func (h *harness) autopilotJob(task string) (Job, error) {
	job := Job{Task: task}
	err := readJobFiles(filepath.Join(h.repo, ".ralph", runfiles.TasksDir, task), &job)
	return job, err
}
