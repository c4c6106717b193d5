package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

func TestLoopTwoHatsCompletes(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())

	r := w.ralph("loop", "-c", "ralph.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "hello\n", w.read("hello.txt"))
	assert.Equal(t, []string{
		"ralph task.start",
		"tag build.task", "finished ralph success",
		"agent build.done", "finished builder success",
		"tag review.approved", "finished reviewer success",
		"tag LOOP_COMPLETE", "finished ralph success",
		"tag LOOP_COMPLETE", "finished ralph success", // the confirmation iteration
		"terminate completed",
	}, w.flow())
	assert.Contains(t, r.stderr, "ended: completed (exit 0)")
	assert.Contains(t, w.prompt(2), "create hello.txt", "the builder is given the event's payload")
	assert.Contains(t, w.prompt(5), "hello.txt exists and was reviewed", "the confirming agent is shown the claim")
}

func TestLoopWithoutConfirmation(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  completion_confirmations: 1\n"+twoHatConfig[len("event_loop:\n"):]+agentCLI())
	w.script(twoHatScript())

	r := w.ralph("loop")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{
		"ralph task.start",
		"tag build.task", "finished ralph success",
		"agent build.done", "finished builder success",
		"tag review.approved", "finished reviewer success",
		"tag LOOP_COMPLETE", "finished ralph success",
		"terminate completed",
	}, w.flow())
}

func TestLoopMaxIterationsExits2(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	// The agent makes progress (it changes a file) but never finishes, so
	// the limit, not stuck detection, ends the run.
	w.script(agentScript{Steps: []step{{Append: map[string]string{"notes.txt": "more\n"}, Say: "still working"}}})

	r := w.ralph("run", "--max-iterations", "3")

	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "max_iterations")
	assert.Equal(t, "terminate max_iterations", last(w.flow()))
}

func TestLoopFailingAgentExits1(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  max_consecutive_failures: 3\n"+twoHatConfig[len("event_loop:\n"):]+agentCLI())
	w.script(agentScript{Steps: []step{{Stderr: "model overloaded", Exit: 1}}})

	r := w.ralph("loop")

	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "consecutive_failures")
	assert.Contains(t, r.stderr, "model overloaded", "the summary quotes the last failure")
	assert.Equal(t, []string{"ralph task.start",
		"finished ralph failure", "finished ralph failure", "finished ralph failure",
		"terminate consecutive_failures"}, w.flow())
	assert.Contains(t, w.prompt(2), "failed", "the next attempt is told the last one failed")
}

func TestLoopMalformedEventsExit1(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(agentScript{Steps: []step{{Raw: []string{"this is not json", `{"payload": "no topic"}`, `{"topic": "has space"}`}}}})

	r := w.ralph("loop")

	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "validation_failure")
	assert.Equal(t, "terminate validation_failure", last(w.flow()))
}

func TestLoopRoutesTargetedEvents(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"ralph":    {say(`<event topic="note.for" target="reviewer">look at this</event>`), say(tag("LOOP_COMPLETE", "done"))},
		"reviewer": {say("noted")},
	}})

	r := w.ralph("loop", "--max-iterations", "5")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"ralph task.start",
		"tag note.for", "finished ralph success",
		"finished reviewer success",
		"tag LOOP_COMPLETE", "finished ralph success",
		"tag LOOP_COMPLETE", "finished ralph success",
		"terminate completed"}, w.flow())
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
