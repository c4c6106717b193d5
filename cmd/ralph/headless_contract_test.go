package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkBox is a step that checks the box with text and changes a file, as
// an agent working through a spec would.
func checkBox(text string) step {
	return step{Replace: map[string]scriptReplace{"SPEC.md": {Old: "- [ ] " + text, New: "- [x] " + text}},
		Append: map[string]string{"work.txt": text + "\n"}, Say: "Done: " + text}
}

// specConsumer is a supervisor written to the headless specification ralph
// follows (the Factory worker's RalphEvent union): it knows the nine
// events and their fields, each of its type, ignores everything else, and
// reads the run's outcome from the stream and the exit status (its Phase
// 3: 0 all tasks complete, 1 stuck, 2 max iterations, 3 fatal).
type specConsumer struct {
	tasks, tasksDone int
	outcome          string // complete, stuck, failed, or "" when the stream said none of them
}

// specFields are the union's fields of each event, with their types: s a
// string, n a number, o an object, s? an optional string, and a list of
// the values an enumerated field may have.
var specFields = map[string]map[string]any{
	"started":        {"spec": "s", "tasks": "n"},
	"iteration":      {"n": "n", "phase": "s"},
	"tool":           {"type": []string{"read", "write", "bash"}, "path": "s?"},
	"commit":         {"hash": "s", "message": "s"},
	"task_complete":  {"index": "n", "text": "s"},
	"iteration_done": {"n": "n", "duration_ms": "n", "stats": "o"},
	"stuck":          {"reason": "s", "iterations_without_progress": "n"},
	"complete":       {"tasks_done": "n", "total_duration_ms": "n"},
	"failed":         {"error": "s"},
}

func (c *specConsumer) read(t *testing.T, stream string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stream), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		kind, _ := ev["event"].(string)
		fields, ok := specFields[kind]
		if !ok {
			continue // ralph's own events: the union has no place for them, and a switch skips them
		}
		for name, want := range fields {
			require.NoError(t, specType(ev, name, want), "%s: %s", kind, line)
		}
		switch kind {
		case "started":
			c.tasks = int(ev["tasks"].(float64))
		case "complete":
			c.tasksDone = int(ev["tasks_done"].(float64))
			c.outcome = kind
		case "stuck", "failed":
			c.outcome = kind
		}
	}
}

func specType(ev map[string]any, name string, want any) error {
	v, present := ev[name]
	if values, ok := want.([]string); ok {
		s, _ := v.(string)
		for _, allowed := range values {
			if s == allowed {
				return nil
			}
		}
		return fmt.Errorf("%s is %v, not one of %v", name, v, values)
	}
	var ok bool
	switch want {
	case "s":
		_, ok = v.(string)
	case "s?":
		_, isString := v.(string)
		ok = !present || isString
	case "n":
		_, ok = v.(float64)
	case "o":
		_, ok = v.(map[string]any)
	}
	if !ok {
		return fmt.Errorf("%s is %#v, not of the type %s", name, v, want)
	}
	return nil
}

// specExit is the exit status the specification gives an outcome.
var specExit = map[string]int{"complete": 0, "stuck": 1, "": 2, "failed": 3}

// TestHeadlessStreamOfEveryEnding runs a SPEC-mode loop to each ending the
// specification names, and ralph's interrupt, and holds every stream to
// its schema (CheckStream) and to a supervisor written to the
// specification: what it reads of the run agrees with the exit status.
func TestHeadlessStreamOfEveryEnding(t *testing.T) {
	t.Parallel()
	authFailure := `{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}`
	for _, tc := range []struct {
		name    string
		steps   []step
		args    []string
		cli     func() string
		code    int
		end     string // the stream's last event
		outcome string // what the specification's supervisor reads
		done    int
	}{
		{"completed", []step{checkBox("Add the greeting"), checkBox("Add the farewell"), checkBox("Add the README line")},
			[]string{"--all"}, agentCLI, 0, "complete", "complete", 3},
		{"stuck", []step{{Append: map[string]string{"work.txt": "busy\n"}, Say: "working on it"}},
			[]string{"--all", "--stuck-threshold", "2"}, agentCLI, 1, "ended", "stuck", 0},
		{"max_iterations", []step{checkBox("Add the greeting"), checkBox("Add the farewell"), checkBox("Add the README line")},
			[]string{"-n", "2"}, agentCLI, 2, "ended", "", 0},
		{"fatal", []step{{Say: authFailure, Exit: 1}}, []string{"--all"}, claudeCLI, 3, "failed", "failed", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("SPEC.md", threeBoxes)
			w.write("agent.yml", tc.cli())
			w.script(agentScript{Steps: tc.steps})

			r := w.ralph(append([]string{"run", "-c", "agent.yml", "--spec", "SPEC.md", "--headless"}, tc.args...)...)

			require.Equal(t, tc.code, r.code, r.stderr)
			kinds := headlessLines(t, r.stdout)
			assert.Equal(t, tc.end, kinds[len(kinds)-1])
			var c specConsumer
			c.read(t, r.stdout)
			assert.Equal(t, tc.outcome, c.outcome)
			assert.Equal(t, specExit[c.outcome], r.code, "the specification's exit status for what the stream said")
			assert.Equal(t, 3, c.tasks, "started counts the SPEC's boxes")
			assert.Equal(t, tc.done, c.tasksDone)
		})
	}
}

// TestHeadlessStreamOfAnInterruptedRun: SIGINT in an iteration ends the
// stream with `ended` (reason interrupted, exit 130), which a supervisor
// written to the specification reads as neither complete nor stuck.
func TestHeadlessStreamOfAnInterruptedRun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("SPEC.md", threeBoxes)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{{Say: "thinking", SleepMS: 120_000}}})
	cmd := exec.Command(ralphBin, "run", "-c", "agent.yml", "--all", "--headless")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	stdout := &lockedWriter{}
	cmd.Stdout, cmd.Stderr = stdout, &lockedWriter{}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, "the iteration to start", func() bool { return strings.Contains(stdout.String(), `"event":"iteration"`) })

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))

	assert.Equal(t, 130, exitCodeOf(cmd.Wait()))
	kinds := headlessLines(t, stdout.String())
	assert.Equal(t, "ended", kinds[len(kinds)-1])
	assert.Contains(t, stdout.String(), `"reason":"interrupted","exit_code":130`)
	var c specConsumer
	c.read(t, stdout.String())
	assert.Empty(t, c.outcome)
}

// An agent taught by another loop's prompt prints <promise>COMPLETE</promise>
// when it is done: ralph reads it as the completion claim, judged like the
// completion topic (here by the acceptance criteria), while one shown in a
// code block is an example and claims nothing.
func TestPromiseCompleteIsTheCompletionClaim(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Write done.txt.\n  max_iterations: 4\n  completion_confirmations: 1\n"+
		"acceptance_criteria:\n  - {type: file_exists, path: done.txt}\n"+agentCLI())
	w.script(agentScript{Steps: []step{
		say("Tell me when you are done with:\n```\n<promise>COMPLETE</promise>\n```"),
		say("<promise>COMPLETE</promise>"),
		{Write: map[string]string{"done.txt": "done\n"}, Say: "Wrote it.\n<promise>COMPLETE</promise>"},
	}})

	r := w.ralph("loop", "--headless")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"ralph criteria.baseline", "ralph task.start",
		"finished ralph success",                                                                           // the example in a code block claims nothing
		"tag LOOP_COMPLETE", "finished ralph success", "ralph event.rejected", "ralph completion.rejected", // judged, and refused
		"tag LOOP_COMPLETE", "finished ralph success", "terminate completed"}, w.flow())
	assert.Contains(t, r.stdout, `"payload":"<promise>COMPLETE</promise>"`)
}

// A criterion whose file is outside the workspace can never pass: ralph
// validate reports it at its line, and a run refuses to start with it
// rather than ending stuck.
func TestCriteriaOutsideTheWorkspaceAreRefusedBeforeARun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	outside := filepath.Join(t.TempDir(), "done.txt")
	w.write("ralph.yml", "event_loop:\n  prompt: Write done.txt.\n  max_iterations: 2\n"+
		"acceptance_criteria:\n  - {type: file_exists, path: "+outside+"}\n"+agentCLI())
	w.script(agentScript{Steps: []step{say(tag("LOOP_COMPLETE", "done"))}})

	for _, args := range [][]string{{"validate"}, {"loop"}} {
		r := w.ralph(args...)
		assert.Equal(t, 3, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "ralph.yml:5: file_exists ", args)
		assert.Contains(t, r.stderr, fmt.Sprintf("path %q is outside the workspace %s", outside, w.dir), args)
		assert.Contains(t, r.stderr, "hint: criteria only look inside the workspace", args)
	}
	assert.Zero(t, w.agentRuns(), "no agent ran")
}

// ralph validate checks the agent CLI as ralph loop does: a cli.command
// path that runs nothing is an error, while a CLI this machine lacks on
// PATH is for ralph doctor to report; a config for the autopilot needs no
// objective of its own.
func TestValidateChecksTheAgentCLIAsTheLoopDoes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\ncli:\n  backend: command\n  command: ./missing.sh\n")
	r := w.ralph("validate")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, `missing.sh`)
	assert.Equal(t, r.code, w.ralph("loop").code, "the loop refuses it too")

	w.write("ralph.yml", "event_loop:\n  prompt: x\ncli:\n  backend: claude\n  command: ralph-test-no-such-claude\n")
	r = w.ralph("validate")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)

	w.write("ralph.yml", "autopilot:\n  source: {type: checklist, path: TODO.md}\n"+agentCLI())
	r = w.ralph("validate")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "objective", "the autopilot's tasks are the objectives")
}

// The baseline check of the criteria is news, not a problem: it is said
// without "warning:", and not in the headless stream.
func TestTheBaselineIsANoticeNotAWarning(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Write done.txt.\n  max_iterations: 1\n"+
		"acceptance_criteria:\n  - {type: file_exists, path: done.txt}\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("working")}})

	r := w.ralph("loop")
	assert.Contains(t, r.stderr, "ralph: checking the 1 acceptance criterion once before the first iteration (the baseline)")
	assert.NotContains(t, r.stderr, "warning: checking")

	r = w.ralph("loop", "--fresh", "--headless")
	assert.NotContains(t, r.stdout, "baseline)")
	assert.NotContains(t, r.stderr, "baseline)", "the headless stream's stderr keeps to what people must see")
}
