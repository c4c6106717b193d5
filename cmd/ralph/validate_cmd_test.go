package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/examples"
)

// Every preset passes ralph validate, by name with -H and as the ralph.yml
// ralph init writes.
func TestValidatePresets(t *testing.T) {
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("PROMPT.md", "Do the thing.\n")
			r := w.ralph("validate", "-H", name)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.Contains(t, r.stdout, "preset:"+name+": ok (")

			r = w.ralph("init", "--preset", name)
			require.Equal(t, 0, r.code, r.stderr)
			r = w.ralph("validate")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
		})
	}
}

func TestValidateTopology(t *testing.T) {
	t.Run("errors name the hat, the topic and the line, and exit 3", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", `event_loop:
  prompt: x
  required_events: [review.approved]
hats:
  planner:
    triggers: [task.start]
    publishes: [build.task]
  builder:
    triggers: [build.tsak]
    publishes: [build.done]
`)
		r := w.ralph("validate")
		assert.Equal(t, 3, r.code)
		assert.Empty(t, r.stdout)
		dir := w.dir + "/ralph.yml"
		assert.Equal(t, "ralph: warning: "+dir+`:5: hat "planner" publishes "build.task", but no hat triggers on it: the coordinator would take it (hint: add build.task to the triggers of the hat that should act on it, or remove it from planner's publishes)`+"\n"+
			"ralph: warning: "+dir+`:8: hat "builder" publishes "build.done", but no hat triggers on it: the coordinator would take it (hint: add build.done to the triggers of the hat that should act on it, or remove it from builder's publishes)`+"\n"+
			"ralph: error: "+dir+`:8: hat "builder" is unreachable: nothing reachable from the starting event "task.start" publishes a topic matching its triggers (build.tsak) (hint: publish one of its triggers from a hat that runs (add it to that hat's publishes), or change its triggers)`+"\n"+
			"ralph: error: "+dir+`: no path from the starting event "task.start" to the completion topic "LOOP_COMPLETE": it reaches planner, and none of them publishes "LOOP_COMPLETE" (hint: add LOOP_COMPLETE to the publishes of the hat that finishes the work)`+"\n"+
			"ralph: error: "+dir+`: required event "review.approved" is published by no hat, so a completion claim would never be accepted (hint: add it to the publishes of the hat that produces it, or remove it from event_loop.required_events)`+"\n",
			r.stderr)
	})
	t.Run("warnings alone pass", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", twoHatConfig)
		r := w.ralph("validate")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, `ralph: warning: `+w.dir+`/ralph.yml:10: hat "reviewer" publishes "review.approved", but no hat triggers on it: the coordinator would take it`)
		assert.Contains(t, r.stdout, "ralph.yml: ok (2 hats")
	})
	t.Run("a lone error prints its hint on its own line", func(t *testing.T) {
		w := newWorkspace(t)
		w.write("ralph.yml", "event_loop:\n  prompt: x\nhats:\n  a:\n    triggers: [task.start]\n    publishes: [a.done]\n  b:\n    triggers: [a.done]\n    publishes: [a.done]\n")
		r := w.ralph("validate")
		assert.Equal(t, 3, r.code)
		assert.Equal(t, "ralph: error: "+w.dir+`/ralph.yml: no path from the starting event "task.start" to the completion topic "LOOP_COMPLETE": it reaches a, b, and none of them publishes "LOOP_COMPLETE"`+"\n"+
			"ralph: hint: add LOOP_COMPLETE to the publishes of the hat that finishes the work\n", r.stderr)
	})
}

// -H lays a collection over ralph.yml: the collection's hats and event_loop
// rules, ralph.yml's backend.
func TestValidateWithCollectionFile(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", "cli:\n  backend: codex\n"+twoHatConfig)
	w.write("hats/pair.yml", `event_loop:
  completion_promise: PAIR_DONE
  required_events: [pair.reviewed]
hats:
  driver:
    triggers: [task.start, pair.reviewed]
    publishes: [pair.change, PAIR_DONE]
  navigator:
    triggers: [pair.change]
    publishes: [pair.reviewed]
`)
	r := w.ralph("validate", "-H", "hats/pair.yml")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, w.dir+"/ralph.yml: ok (2 hats, backend codex, completion topic PAIR_DONE)\n", r.stdout)
}

// A hat the registry refuses (here: no triggers) is reported at its
// file:line, by ralph validate and ralph loop alike.
func TestHatWithoutTriggersNamesFileAndLine(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", `event_loop:
  prompt: x
hats:
  builder:
    triggers: [build.task]
    publishes: [build.done]
  reviewer:
    publishes: [review.done]
`)
	want := "ralph: error: " + w.dir + `/ralph.yml:7: hat "reviewer": no triggers; list the topics that start this hat under triggers` + "\n"
	for _, cmd := range []string{"validate", "loop"} {
		r := w.ralph(cmd)
		assert.Equal(t, 3, r.code, cmd)
		assert.Equal(t, want, r.stderr, cmd)
	}
}
