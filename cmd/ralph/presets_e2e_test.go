package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
)

// handOff is one iteration of a preset's happy path: the hat that runs,
// the files it writes, and the topic it publishes.
type handOff struct {
	hat   string
	topic string
	write map[string]string
	// wave, when set, publishes that many events of topic as one wave
	// (ralph wave emit); workers says the hat runs that many workers of a
	// wave in its one iteration, each publishing topic.
	wave, workers int
}

// happyPaths walk each preset through every hat to completion, writing
// what its acceptance criteria and gates check. The workspace's Makefile
// has a passing test target, which tests_pass finds.
var happyPaths = map[string][]handOff{
	"solo": {
		{hat: "worker", topic: "LOOP_COMPLETE"},
	},
	"code-assist": {
		{hat: "planner", topic: "build.task"},
		{hat: "builder", topic: "build.done"},
		{hat: "reviewer", topic: "review.approved"},
		{hat: "planner", topic: "plan.complete"},
		{hat: "finalizer", topic: "LOOP_COMPLETE"},
	},
	"tdd": {
		{hat: "red", topic: "test.red"},
		{hat: "green", topic: "test.green"},
		{hat: "refactor", topic: "refactor.done"},
		{hat: "red", topic: "LOOP_COMPLETE"},
	},
	"debug": {
		{hat: "investigator", topic: "hypothesis.proposed"},
		{hat: "experimenter", topic: "hypothesis.confirmed"},
		{hat: "fixer", topic: "fix.applied"},
		{hat: "verifier", topic: "LOOP_COMPLETE"},
	},
	"review": {
		{hat: "scoper", topic: "review.area"},
		{hat: "reviewer", topic: "review.area"},
		{hat: "reviewer", topic: "review.complete"},
		{hat: "reporter", topic: "LOOP_COMPLETE", write: map[string]string{
			"REVIEW.md": "Approve with changes.\n\n## Findings\n\n- minor: main.go:3 has no test\n"}},
	},
	"research": {
		{hat: "researcher", topic: "research.more", write: map[string]string{"research/notes.md": "- [ ] Which API?\n"}},
		{hat: "researcher", topic: "research.done", write: map[string]string{"research/notes.md": "- [x] Which API? v2 (docs/api.md:12)\n"}},
		{hat: "synthesizer", topic: "LOOP_COMPLETE", write: map[string]string{"RESEARCH.md": "Use v2.\n"}},
	},
	"spec-driven": {
		{hat: "spec", topic: "spec.ready", write: map[string]string{"SPEC.md": "R1: greet.\n"}},
		{hat: "planner", topic: "build.task"},
		{hat: "builder", topic: "build.done"},
		{hat: "planner", topic: "plan.complete"},
		{hat: "verifier", topic: "LOOP_COMPLETE"},
	},
	"wave-review": {
		{hat: "dispatcher", topic: "review.perspective", wave: 3},
		{hat: "reviewer", topic: "review.done", workers: 3},
		{hat: "synthesizer", topic: "LOOP_COMPLETE", write: map[string]string{
			"REVIEW.md": "Approve with changes.\n\n## Findings\n\n- minor: main.go:3 has no test\n"}},
	},
}

// A run of every preset, written by ralph init and driven by a scripted
// agent along its happy path, reaches completion with every hat having
// run, its gates and acceptance criteria passing on the way.
func TestPresetsHappyPath(t *testing.T) {
	require.ElementsMatch(t, examples.Names(), keys(happyPaths), "a happy path for every preset")
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			w.write("Makefile", "test:\n\t@echo ok\n")
			r := w.ralph("init", "--preset", name)
			require.Equal(t, 0, r.code, r.stderr)
			w.write("agent.yml", "event_loop:\n  completion_confirmations: 1\n  max_iterations: 20\n"+agentCLI())
			w.script(happyScript(happyPaths[name]))

			r = w.ralph("loop", "-c", "ralph.yml", "-c", "agent.yml")

			require.Equal(t, 0, r.code, "stderr:\n%s\nflow:\n%s", r.stderr, strings.Join(w.flow(), "\n"))
			flow := w.flow()
			assert.Equal(t, "terminate completed", flow[len(flow)-1])
			for _, id := range presetHats(t, name) {
				assert.Contains(t, flow, "finished "+id+" success", "hat %s ran", id)
			}
			assert.Equal(t, wantFlow(happyPaths[name]), agentFlow(flow), "each hand-off accepted in turn, none blocked")
		})
	}
}

// happyScript is the scripted agent's script: per hat, its steps in the
// order the path visits it, each writing its files and publishing with
// ralph emit (the completion topic as a tag, the way agents often do).
func happyScript(path []handOff) agentScript {
	byHat := map[string][]step{}
	for i, h := range path {
		payload := fmt.Sprintf("step %d of the happy path", i+1)
		if h.topic == "test.red" {
			payload = "greeting_test.go: --- FAIL: TestGreeting (0.00s): greeting is empty"
		}
		st := emitStep(h.topic, payload)
		if h.topic == "LOOP_COMPLETE" {
			st = say("All done and verified. " + tag(h.topic, payload))
		}
		if h.write != nil {
			st.Write = h.write
		}
		if h.wave > 0 {
			st = step{Sh: fmt.Sprintf(`"$RALPH_BIN" wave emit %s --payloads`, h.topic) + strings.Repeat(` "`+payload+`"`, h.wave)}
		}
		for range max(h.workers, 1) {
			byHat[h.hat] = append(byHat[h.hat], st)
		}
	}
	return agentScript{ByHat: byHat}
}

func presetHats(t *testing.T, name string) []string {
	p, _ := examples.Lookup(name)
	cfg, err := config.LoadBytes(p.Path(), p.Data)
	require.NoError(t, err)
	var ids []string
	for _, h := range cfg.Hats {
		ids = append(ids, h.ID)
	}
	return ids
}

// agentFlow keeps what the agent published and which hat finished.
func agentFlow(flow []string) []string {
	var out []string
	for _, f := range flow {
		if strings.HasPrefix(f, "agent ") || strings.HasPrefix(f, "tag ") || strings.HasPrefix(f, "finished ") ||
			strings.Contains(f, ".blocked") {
			out = append(out, f)
		}
	}
	return out
}

func wantFlow(path []handOff) []string {
	var out []string
	for _, h := range path {
		source := "agent "
		if h.topic == "LOOP_COMPLETE" {
			source = "tag "
		}
		for range max(h.wave, h.workers, 1) {
			out = append(out, source+h.topic)
		}
		out = append(out, "finished "+h.hat+" success")
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// code-assist's gate holds build.done back until the tests pass: the
// builder gets build.done.blocked with the failure and tries again.
func TestCodeAssistGateBlocksFailingTests(t *testing.T) {
	w := newWorkspace(t)
	w.write("Makefile", "test:\n\t@test -f fixed || { echo 'FAIL: fixed is missing'; exit 1; }\n")
	require.Equal(t, 0, w.ralph("init").code)
	w.write("agent.yml", "event_loop:\n  completion_confirmations: 1\n  max_iterations: 20\n"+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"planner":   {emitStep("build.task", "make fixed"), emitStep("plan.complete", "all done")},
		"builder":   {emitStep("build.done", "done, I think"), {Write: map[string]string{"fixed": "yes\n"}, Emit: []scriptEmit{{Topic: "build.done", Payload: "fixed"}}}},
		"reviewer":  {emitStep("review.approved", "fine")},
		"finalizer": {say(tag("LOOP_COMPLETE", "done"))},
	}})

	r := w.ralph("loop", "-c", "ralph.yml", "-c", "agent.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{
		"agent build.task", "finished planner success",
		"agent build.done", "finished builder success", "ralph build.done.blocked",
		"agent build.done", "finished builder success",
		"agent review.approved", "finished reviewer success",
		"agent plan.complete", "finished planner success",
		"tag LOOP_COMPLETE", "finished finalizer success",
	}, agentFlow(w.flow()))
	assert.Contains(t, w.prompt(3), "FAIL: fixed is missing", "the builder sees why")
}

// orchestratorCollection is a hat collection in ralph-orchestrator's shape:
// quoted topics, emoji names, its own starting event and completion topic,
// and keys ralph does not implement.
const orchestratorCollection = `# feature.yml, a ralph-orchestrator hat collection
event_loop:
  starting_event: "build.start"
  completion_promise: "FEATURE_DONE"
  required_events: ["validation.passed"]
  max_iterations: 15
  checkpoint_interval: 5
core:
  scratchpad: ".agent/scratchpad.md"
hats:
  planner:
    name: "📋 Planner"
    triggers: ["build.start"]
    publishes: ["tasks.ready"]
    default_publishes: "tasks.ready"
    instructions: "Break the objective into tasks."
  builder:
    name: "⚙️ Builder"
    triggers: ["tasks.ready", "validation.failed"]
    publishes: ["implementation.ready"]
    instructions: "Build one task."
    extra_instructions: ["Run the tests."]
  validator:
    name: "✅ Validator"
    triggers: ["implementation.ready"]
    publishes: ["validation.passed", "validation.failed", "FEATURE_DONE"]
    instructions: "Validate, then finish."
`

// A ralph-orchestrator collection runs through -H with its event_loop
// rules kept (its starting event, completion topic and required events),
// and the keys ralph ignores named in one warning.
func TestOrchestratorCollectionRuns(t *testing.T) {
	w := newWorkspace(t)
	w.write("feature.yml", orchestratorCollection)
	w.write("ralph.yml", "event_loop:\n  prompt: Add a greeting.\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"planner": {say("Planned.")}, // default_publishes carries on
		"builder": {emitStep("implementation.ready", "greeting added")},
		"validator": {{Emit: []scriptEmit{{Topic: "validation.passed", Payload: "tests pass"}},
			Say: tag("FEATURE_DONE", "validated")}},
	}})

	r := w.ralph("validate", "-H", "feature.yml")
	require.Equal(t, 0, r.code, r.stderr)
	warning := "ralph: warning: " + w.dir + "/feature.yml: ignoring keys ralph does not implement: " +
		"event_loop.checkpoint_interval (line 7), core (line 8), hats.builder.extra_instructions (line 22)\n"
	assert.Equal(t, warning+"ralph: warning: "+w.dir+`/feature.yml:23: hat "validator" publishes "validation.passed", but no hat triggers on it: the coordinator would take it (hint: add validation.passed to the triggers of the hat that should act on it, or remove it from validator's publishes)`+"\n", r.stderr)

	r = w.ralph("loop", "-H", "feature.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, warning), r.stderr)
	assert.Equal(t, []string{
		"ralph build.start",
		"finished planner success", "ralph tasks.ready", // default_publishes
		"agent implementation.ready", "finished builder success",
		"agent validation.passed", "tag FEATURE_DONE", "finished validator success",
		"terminate completed",
	}, w.flow())
}
