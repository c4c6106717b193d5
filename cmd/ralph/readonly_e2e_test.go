package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// ralph watch, ralph events -f and ralph serve only read: pointed at a
// directory where no run has been, each waits or serves and makes
// nothing there, not even .ralph/.
func TestTheReadersMakeNothingInAnEmptyDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"watch"}, {"events", "-f"}} {
		cmd := exec.Command(ralphBin, append([]string{"-C", dir}, args...)...)
		said := &lockedWriter{}
		cmd.Stdout, cmd.Stderr = said, said
		require.NoError(t, cmd.Start())
		waitFor(t, "ralph "+strings.Join(args, " ")+" to wait for a run", func() bool { return strings.Contains(said.String(), "waiting") })
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
	}
	s := startServe(t, dir)
	var status map[string]any
	s.getJSON("/api/status", &status)
	assert.Contains(t, s.stdout(), "has no .ralph/, and a reader makes none")
	s.stop()

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing made in the directory")
}

// ralph emit run by a person (no loop set RALPH_ITERATION) records the
// event as a person's, and the events table and the next prompt say so;
// the agent's own emit is the agent's.
func TestEmitByAPersonIsRecordedAsHuman(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  max_iterations: 2\n"+agentCLI())
	w.script(agentScript{Steps: []step{
		{Sh: `touch "$SCRIPTAGENT_STATE/working"; ` + waitRelease, Emit: []scriptEmit{{Topic: "build.done", Payload: "from the agent"}}},
		say("second"),
	}})
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the agent at work", func() bool { return fileExists(filepath.Join(w.state, "working")) })

	r := w.ralphEnv([]string{"RALPH_ITERATION=", "RALPH_HAT=", "RALPH_EVENTS_FILE="}, "emit", "review.hint", "look at the parser")
	require.Equal(t, 0, r.code, r.stderr)
	refused := w.ralphEnv([]string{"RALPH_ITERATION="}, "emit", "human.answered", "yes")
	assert.Equal(t, 3, refused.code)
	assert.Contains(t, refused.stderr, "ralph answer")
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	assert.Equal(t, 2, exitCodeOf(loop.Wait()), stderr.String())

	sources := map[string]string{}
	for _, rec := range w.events() {
		if rec.Err == nil && (rec.Event.Topic == "review.hint" || rec.Event.Topic == "build.done") {
			sources[rec.Event.Topic] = rec.Event.Source
		}
	}
	assert.Equal(t, map[string]string{"review.hint": events.SourceHuman, "build.done": events.SourceAgent}, sources)
	assert.Regexp(t, `human +review\.hint +look at the parser`, w.ralph("events").stdout)
	assert.Contains(t, w.prompt(2), "from a person")

	out := w.ralph("events", "--json", "--topic", "review.hint")
	var ev struct{ Source string }
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(out.stdout, "\n", 2)[0]), &ev), out.stdout)
	assert.Equal(t, "human", ev.Source)
}

// ralph events --autopilot -f before any autopilot ran waits for one, as
// ralph events -f waits for a loop, and follows it to its end.
func TestEventsAutopilotFollowWaitsForAnAutopilot(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "- [ ] One\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{Sh: `echo one > one.txt`, Commit: "do the task", Say: tag("LOOP_COMPLETE", "done")}}})

	follow := exec.Command(ralphBin, "events", "--autopilot", "-f")
	follow.Dir = w.dir
	out, said := &lockedWriter{}, &lockedWriter{}
	follow.Stdout, follow.Stderr = out, said
	require.NoError(t, follow.Start())
	t.Cleanup(func() { _ = follow.Process.Kill() })
	waitFor(t, "the follower to wait", func() bool { return strings.Contains(said.String(), "waiting for one to start") })

	r := w.ralph("autopilot")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, follow.Wait(), said.String())
	assert.Contains(t, out.String(), "autopilot.stopped")
	assert.Contains(t, out.String(), "completed: one")
}
