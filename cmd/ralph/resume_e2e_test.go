package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iterationsRun counts the iterations that ran to an end in the run's log.
func (w *workspace) iterationsRun() int {
	n := 0
	for _, line := range w.flow() {
		if strings.HasPrefix(line, "finished ") {
			n++
		}
	}
	return n
}

// A run that hit max_iterations says how to go on; a plain resume keeps
// the limit it was started with (so it ends again at once, saying the same),
// and a resume with a higher --max-iterations continues and completes.
func TestResumeWithHigherMaxIterationsCompletes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("loop.yml", twoHatConfig+agentCLI()) // not ralph.yml: the resume must remember -c
	w.script(twoHatScript())

	r := w.ralph("loop", "-c", "loop.yml", "--max-iterations", "2")
	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "reached max_iterations (2); to go on, raise it on the resume: `ralph loop --resume --max-iterations 4`")
	assert.NotContains(t, r.stderr, "Resume with `ralph loop --resume`;", "no advice that leads nowhere")

	r = w.ralph("loop", "--resume")
	assert.Equal(t, 2, r.code, "the --max-iterations 2 of the start still holds, not the config's 12: %s", r.stderr)
	assert.Equal(t, 2, w.iterationsRun())
	assert.Contains(t, r.stderr, "--max-iterations 4")

	r = w.ralph("loop", "--resume", "--max-iterations", "10")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "terminate completed", last(w.flow()))
	assert.Equal(t, 5, w.iterationsRun(), "the run went on from iteration 3")
	assert.Equal(t, "hello\n", w.read("hello.txt"))
}

// An agent that needs a few quiet iterations before it finishes: the run
// ends as stuck, and a resume with a higher --stuck-threshold lets it finish.
func TestResumeWithHigherStuckThresholdCompletes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: think hard\n  completion_confirmations: 1\n  stuck_threshold: 2\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("thinking"), say("still thinking"), say("done " + tag("LOOP_COMPLETE", "thought it through"))}})

	r := w.ralph("loop")
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "to go on, raise it on the resume: `ralph loop --resume --stuck-threshold 4`")

	r = w.ralph("loop", "--resume")
	assert.Equal(t, 1, r.code, "a plain resume is still stuck: %s", r.stderr)
	assert.Equal(t, 2, w.iterationsRun())

	r = w.ralph("loop", "--resume", "--stuck-threshold", "4")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "terminate completed", last(w.flow()))
	assert.Equal(t, 3, w.iterationsRun())
}

// --max-runtime raises event_loop.max_runtime_seconds on a resume. The
// agent's first iteration takes longer than the one second allowed.
func TestResumeWithHigherMaxRuntimeCompletes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: take your time\n  completion_confirmations: 1\n  max_runtime_seconds: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{
		{Append: map[string]string{"notes.txt": "slow work\n"}, SleepMS: 1100},
		say(tag("LOOP_COMPLETE", "finished")),
	}})

	r := w.ralph("loop")
	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "reached max_runtime_seconds (1s); to go on, raise it on the resume: `ralph loop --resume --max-runtime 2s`")

	r = w.ralph("loop", "--resume", "--max-runtime", "1h")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "terminate completed", last(w.flow()))
}

// tickBox checks the box with text in TODO.md, as an agent working through
// that spec would.
func tickBox(text string) step {
	return step{Replace: map[string]scriptReplace{"TODO.md": {Old: "- [ ] " + text, New: "- [x] " + text}}, Say: "Done: " + text}
}

// A SPEC-mode run resumes in SPEC mode, on its own spec and with its -c
// file, without --spec or -c on the resume: a TODO.md is no SPEC.md that
// ralph would find by itself.
func TestResumeKeepsSpecMode(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("TODO.md", threeBoxes)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{tickBox("Add the greeting"), tickBox("Add the farewell"), tickBox("Add the README line")}})

	r := w.ralph("run", "-c", "agent.yml", "--spec", "TODO.md")
	require.Equal(t, 2, r.code, "one iteration by default: %s", r.stderr)
	assert.Contains(t, r.stderr, "to go on, raise it on the resume: `ralph run --resume -n 2`")

	r = w.ralph("run", "--resume", "-n", "3", "--headless")

	require.Equal(t, 0, r.code, r.stderr)
	evs := headlessEvents(t, r.stdout)
	assert.Equal(t, true, evs[0]["resumed"])
	assert.Equal(t, filepath.Join(w.dir, "TODO.md"), evs[0]["objective_source"], "not an objective from -")
	assert.Equal(t, 2, countEvents(evs, "task_complete"), "the two boxes left")
	assert.Equal(t, "completed", evs[len(evs)-1]["reason"])
	assert.NotContains(t, w.read("TODO.md"), "- [ ]")
}

// The spec of a run cannot change on resume: its objective was written
// for its own spec.
func TestResumeRefusesAnotherSpec(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("TODO.md", threeBoxes)
	w.write("OTHER.md", threeBoxes)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{tickBox("Add the greeting")}})
	require.Equal(t, 2, w.ralph("run", "-c", "agent.yml", "--spec", "TODO.md").code)

	r := w.ralph("run", "--resume", "--spec", "OTHER.md", "-n", "3")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--spec OTHER.md: the run to resume works through TODO.md")

	r = w.ralph("run", "--resume", "--spec", "TODO.md", "-n", "2")
	assert.Equal(t, 2, r.code, "naming the run's own spec is fine: %s", r.stderr)
}

// A run that stopped on failures goes on when resumed: the user resumes
// it because the cause is fixed, and the old count must not end it again
// before one iteration could show that.
func TestResumeAfterConsecutiveFailuresStartsTheCountAfresh(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: build\n  completion_confirmations: 1\n  max_consecutive_failures: 2\n"+agentCLI())
	w.script(agentScript{Steps: []step{
		{Stderr: "model overloaded", Exit: 1}, {Stderr: "model overloaded", Exit: 1},
		say(tag("LOOP_COMPLETE", "built")),
	}})

	require.Equal(t, 1, w.ralph("loop").code)

	r := w.ralph("loop", "--resume")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "terminate completed", last(w.flow()))
}

// A supervisor that lost track of its loop (it crashed itself) may resume
// it whatever happened meanwhile. A run that ended with nothing to go on
// with is said to have ended (its reason, when, its exit status), nothing
// runs and nothing is written, and the resume exits with the run's own
// status: 0 after a completion, 2 after a limit the resume does not raise.
func TestResumeOfAnEndedRunSaysHowItEnded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		start  []string
		code   int
		reason string
	}{
		{name: "completed", start: []string{"loop"}, code: 0, reason: "completed (exit 0) — the completion topic LOOP_COMPLETE was accepted"},
		{name: "max_iterations", start: []string{"loop", "--max-iterations", "2"}, code: 2,
			reason: "max_iterations (exit 2) — reached max_iterations (2); to go on, raise it on the resume: `ralph loop --resume --max-iterations 4`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", twoHatConfig+agentCLI())
			w.script(twoHatScript())
			r := w.ralph(tc.start...)
			require.Equal(t, tc.code, r.code, r.stderr)
			runID, log, runs := w.status().RunID, w.events(), w.agentRuns()

			r = w.ralph("loop", "--resume")
			assert.Equal(t, tc.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, "ralph: nothing to resume: run "+runID+" had already ended at ")
			assert.Contains(t, r.stderr, ": "+tc.reason)
			assert.Equal(t, log, w.events(), "nothing is written")
			assert.Equal(t, runs, w.agentRuns(), "no agent runs")

			r = w.ralph("loop", "--resume", "--headless")
			assert.Equal(t, tc.code, r.code, r.stderr)
			var complete struct {
				Event        string `json:"event"`
				RunID        string `json:"run_id"`
				Reason       string `json:"reason"`
				ExitCode     int    `json:"exit_code"`
				AlreadyEnded bool   `json:"already_ended"`
				EndedAt      string `json:"ended_at"`
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &complete), r.stdout)
			wantEvent := "ended"
			if tc.name == "completed" {
				wantEvent = "complete"
			}
			assert.Equal(t, wantEvent, complete.Event, "complete only for a run that completed")
			assert.Equal(t, runID, complete.RunID)
			assert.Equal(t, tc.name, complete.Reason)
			assert.Equal(t, tc.code, complete.ExitCode)
			assert.True(t, complete.AlreadyEnded)
			assert.NotEmpty(t, complete.EndedAt)
			assert.Equal(t, log, w.events(), "nothing is written")
		})
	}
}

// A resume while the run still runs in another ralph (a supervisor
// restarted beside its loop) says that it runs, and which process runs
// it, and succeeds: what it asks for is being done.
func TestResumeOfARunningRunSaysItRuns(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{{Sh: `touch "$SCRIPTAGENT_STATE/working"; ` + waitRelease, Say: tag("LOOP_COMPLETE", "done")}}})
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the agent to start working", func() bool { return fileExists(filepath.Join(w.state, "working")) })
	runID := w.status().RunID

	r := w.ralph("loop", "--resume")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, fmt.Sprintf("ralph: run %s is already running in this workspace (pid %d, started ", runID, loop.Process.Pid))
	assert.Contains(t, r.stderr, "`ralph events -f`")
	assert.Contains(t, r.stderr, "`ralph status`")

	r = w.ralph("loop")
	assert.Equal(t, 3, r.code, "a new run beside it is still refused: %s", r.stderr)
	assert.Contains(t, r.stderr, "another ralph is running in this workspace")

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.NoError(t, loop.Wait(), stderr.String())
	assert.Equal(t, "terminate completed", last(w.flow()), "the resume beside it changed nothing")
}

const threeBoxes = "# Spec\n\n- [ ] Add the greeting\n- [ ] Add the farewell\n- [ ] Add the README line\n"

func headlessEvents(t *testing.T, stdout string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "line %q", line)
		out = append(out, ev)
	}
	return out
}

func countEvents(evs []map[string]any, kind string) int {
	n := 0
	for _, ev := range evs {
		if ev["event"] == kind {
			n++
		}
	}
	return n
}

// --model is recorded with the run and kept on a resume, and a model that
// could be read as a flag of the agent's is refused before anything runs.
func TestResumeKeepsTheModel(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI()+"  model: config-model\n")
	w.script(twoHatScript())

	r := w.ralph("loop", "--model=--dangerously-skip-permissions")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, `--model: model "--dangerously-skip-permissions" starts with "-"`)
	assert.NoFileExists(t, filepath.Join(w.dir, ".ralph", "state.json"), "nothing ran")

	r = w.ralph("loop", "--model", "flag-model", "--max-iterations", "2")
	require.Equal(t, 2, r.code, r.stderr)
	r = w.ralph("loop", "--resume", "--max-iterations", "10")
	require.Equal(t, 0, r.code, r.stderr)
	var models []string
	for _, rec := range w.events() {
		if rec.Err != nil || rec.Event.Topic != "iteration.finished" {
			continue
		}
		var f struct {
			Model string `json:"model"`
		}
		require.NoError(t, json.Unmarshal(rec.Event.Payload, &f))
		models = append(models, f.Model)
	}
	assert.Equal(t, []string{"flag-model", "flag-model", "flag-model", "flag-model", "flag-model"}, models,
		"every iteration, those after the resume too, ran with the model of the start")
}
