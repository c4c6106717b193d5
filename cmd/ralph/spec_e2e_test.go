package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const threeBoxes = "# Spec\n\n- [ ] Add the greeting\n- [ ] Add the farewell\n- [ ] Add the README line\n"

// checkBox is a step that checks the box with text and changes a file, as
// an agent working through a spec would.
func checkBox(text string) step {
	return step{Replace: map[string]scriptReplace{"SPEC.md": {Old: "- [ ] " + text, New: "- [x] " + text}},
		Append: map[string]string{"work.txt": text + "\n"}, Say: "Done: " + text}
}

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

func TestSpecModeChecksEveryBox(t *testing.T) {
	w := newWorkspace(t)
	w.write("SPEC.md", threeBoxes)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{checkBox("Add the greeting"), checkBox("Add the farewell"), checkBox("Add the README line")}})

	r := w.ralph("run", "-c", "agent.yml", "--all", "--headless")

	require.Equal(t, 0, r.code, r.stderr)
	evs := headlessEvents(t, r.stdout)
	assert.Equal(t, 3, countEvents(evs, "task_complete"))
	assert.Equal(t, "complete", evs[len(evs)-1]["event"])
	assert.Equal(t, "completed", evs[len(evs)-1]["reason"])
	assert.Equal(t, "every box of SPEC.md is checked", evs[len(evs)-1]["message"], "no agent published a completion topic")
	assert.NotContains(t, w.read("SPEC.md"), "- [ ]")
	assert.Contains(t, w.prompt(1), "SPEC.md", "the agent is told to work through the spec")
}

func TestSpecModeStuckWhenNoBoxIsChecked(t *testing.T) {
	w := newWorkspace(t)
	w.write("SPEC.md", threeBoxes)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{{Append: map[string]string{"work.txt": "busy\n"}, Say: "working on it"}}})

	r := w.ralph("run", "-c", "agent.yml", "--spec", "SPEC.md", "--all", "--stuck-threshold", "2", "--headless")

	assert.Equal(t, 1, r.code, r.stderr)
	evs := headlessEvents(t, r.stdout)
	assert.Equal(t, 1, countEvents(evs, "stuck"))
	assert.Equal(t, 0, countEvents(evs, "task_complete"))
	assert.Equal(t, 2, countEvents(evs, "iteration_done"), "a changed file is no progress in SPEC mode; only a checked box is")
}

func TestSpecModeIterationLimits(t *testing.T) {
	w := newWorkspace(t)
	w.write("SPEC.md", threeBoxes)
	w.write("agent.yml", agentCLI())
	w.script(agentScript{Steps: []step{checkBox("Add the greeting"), checkBox("Add the farewell"), checkBox("Add the README line")}})

	r := w.ralph("run", "-c", "agent.yml")
	assert.Equal(t, 2, r.code, "one iteration by default, then out of iterations: %s", r.stderr)

	r = w.ralph("run", "-c", "agent.yml", "-n", "5", "--fresh")
	assert.Equal(t, 0, r.code, "the other two boxes within 5 iterations: %s", r.stderr)
}

// -n and --all set SPEC mode's limit; in a run with an objective of its own
// they would be ignored, and the config's limit taken instead.
func TestSpecFlagsOutsideSpecModeAreRefused(t *testing.T) {
	for _, flag := range [][]string{{"-n", "2"}, {"--all"}} {
		t.Run(flag[0], func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", "event_loop:\n  prompt: do it\n"+agentCLI())
			r := w.ralph(append([]string{"run"}, flag...)...)
			assert.Equal(t, 3, r.code, r.stderr)
			assert.Contains(t, r.stderr, "ralph: error: "+flag[0]+" is for SPEC mode")
			assert.Contains(t, r.stderr, "--max-iterations N")
			assert.NoDirExists(t, filepath.Join(w.dir, ".ralph"), "nothing ran")
		})
	}
}
