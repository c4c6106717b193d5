package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// targetingAgent is a coordinator that first targets "Builder", the wrong
// case of the builder's id, and notes what `ralph emit` said, then targets
// "builder". The builder and reviewer just hand on.
const targetingAgent = `#!/bin/sh
case "$RALPH_HAT" in
builder)
	echo '<event topic="build.done">built</event>'
	;;
reviewer)
	echo '<event topic="review.approved">ok</event>'
	;;
*)
	if [ -f "$SCRIPTAGENT_STATE/emit.code" ]; then
		echo '<event topic="LOOP_COMPLETE">done</event>'
		exit 0
	fi
	"$RALPH_BIN" emit build.task "wrong case" --target Builder 2> "$SCRIPTAGENT_STATE/emit.err"
	echo $? > "$SCRIPTAGENT_STATE/emit.code"
	"$RALPH_BIN" emit build.task "right case" --target builder
	;;
esac
`

// An agent's `ralph emit --target` with a hat the run does not have is
// refused at once, with the nearest hat, and nothing reaches the log.
func TestE2EEmitRefusesATargetTheRunHasNot(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	agent := filepath.Join(w.state, "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(targetingAgent), 0o755))
	w.write("ralph.yml", twoHatConfig+"cli:\n  backend: command\n  command: "+agent+"\n")

	r := w.ralph("loop")

	require.Equal(t, 0, r.code, r.stderr)
	code, err := os.ReadFile(filepath.Join(w.state, "emit.code"))
	require.NoError(t, err)
	assert.Equal(t, "3", strings.TrimSpace(string(code)))
	stderr, err := os.ReadFile(filepath.Join(w.state, "emit.err"))
	require.NoError(t, err)
	assert.Equal(t, "ralph: error: --target: no hat \"Builder\"; did you mean \"builder\"?\n"+
		"ralph: hint: the hats are: ralph, builder, reviewer\n", string(stderr))
	assert.Equal(t, []string{"ralph task.start",
		"agent build.task", "finished ralph success",
		"tag build.done", "finished builder success",
		"tag review.approved", "finished reviewer success",
		"tag LOOP_COMPLETE", "finished ralph success",
		"tag LOOP_COMPLETE", "finished ralph success",
		"terminate completed"}, w.flow(), "only the event for builder was written")
}

// `ralph emit --target` by hand, in the workspace of a run, knows the
// run's hats from its log; the coordinator is one of them. (The run ended
// by its limit, so a resume would read what is emitted.)
func TestEmitChecksTheTargetAgainstTheRunsHats(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())
	require.Equal(t, 2, w.ralph("loop", "--max-iterations", "1").code)
	before := len(w.events())

	for _, target := range []string{"reviwer", "Reviewer", "deployer"} {
		r := w.ralph("emit", "note", "x", "--target", target)
		assert.Equal(t, 3, r.code, target)
		assert.Contains(t, r.stderr, `ralph: error: --target: no hat "`+target+`"`)
		assert.Contains(t, r.stderr, "ralph: hint: the hats are: ralph, builder, reviewer")
	}
	assert.Contains(t, w.ralph("emit", "note", "x", "--target", "Reviewer").stderr, `did you mean "reviewer"?`)
	assert.Len(t, w.events(), before, "a refused event is not written")

	for _, target := range []string{"reviewer", "ralph"} {
		r := w.ralph("emit", "note", "x", "--target", target)
		assert.Equal(t, 0, r.code, r.stderr)
	}
	assert.Len(t, w.events(), before+2)
}

// The loop rejects a tag's unknown target: there is no emit to refuse it.
func TestE2ETagWithUnknownTargetIsRejected(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(agentScript{Steps: []step{
		say(`<event topic="build.task" target="Builder">go</event>`),
		say(tag("LOOP_COMPLETE", "done {{run}}")),
	}})

	r := w.ralph("loop")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"unknown_target"}, w.rejectionsOf("build.task"))
	assert.Contains(t, w.prompt(2), `Your event "build.task" was rejected (unknown_target): no hat "Builder"; did you mean "builder"?`)
	assert.NotContains(t, w.flow(), "finished builder success", "the event did not reach the builder by its topic")
}
