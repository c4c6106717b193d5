package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// handOff is one iteration of a preset's happy path: the hat that runs,
// the files it writes, what it commits, and the topic it publishes, with
// payload when a gate reads it.
type handOff struct {
	hat     string
	topic   string
	payload string
	write   map[string]string
	commit  string
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
		{hat: "red", topic: "test.red", payload: "greeting_test.go: --- FAIL: TestGreeting (0.00s): greeting is empty"},
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
	"spec": {
		{hat: "drafter", topic: "spec.draft", write: map[string]string{"SPEC.md": specDoc}},
		{hat: "critic", topic: "spec.revise", payload: "R1 has no error case"},
		{hat: "drafter", topic: "spec.draft", write: map[string]string{"SPEC.md": specDoc + "- Given no name, When greeting, Then error\n"}},
		{hat: "critic", topic: "LOOP_COMPLETE"},
	},
	"refactor": {
		{hat: "surveyor", topic: "refactor.step"},
		{hat: "refactorer", topic: "refactor.done", write: map[string]string{"main.go": "package main\n"}, commit: "refactor: extract greet"},
		{hat: "reviewer", topic: "refactor.approved"},
		{hat: "surveyor", topic: "LOOP_COMPLETE"},
	},
	"test-writing": {
		{hat: "mapper", topic: "tests.target"},
		{hat: "writer", topic: "tests.written", write: map[string]string{"greet_test.go": "package main\n"}, commit: "test: greeting"},
		{hat: "checker", topic: "tests.approved"},
		{hat: "mapper", topic: "LOOP_COMPLETE"},
	},
	"perf": {
		{hat: "measurer", topic: "perf.baseline", write: map[string]string{"PERF.md": "## Benchmark\n\nmake bench\n\n## Baseline\n\n120 ms ± 3\n"}},
		{hat: "optimizer", topic: "perf.change", write: map[string]string{"main.go": "package main\n"}, commit: "perf: cache the parsed template"},
		{hat: "measurer", topic: "perf.kept", payload: "120 ms -> 80 ms"},
		{hat: "optimizer", topic: "perf.done"},
		{hat: "reporter", topic: "LOOP_COMPLETE", write: map[string]string{
			"PERF.md": "## Benchmark\n\nmake bench\n\n## Baseline\n\n120 ms ± 3\n\n## Result\n\n80 ms (-33%)\n"}},
	},
	"docs": {
		{hat: "auditor", topic: "docs.task"},
		{hat: "writer", topic: "docs.written", write: map[string]string{"docs/usage.md": "# Usage\n"}, commit: "docs: usage"},
		{hat: "checker", topic: "docs.checked"},
		{hat: "auditor", topic: "LOOP_COMPLETE"},
	},
	"triage": {
		{hat: "intake", topic: "triage.report"},
		{hat: "triager", topic: "triage.report", write: map[string]string{"triage/notes.md": "#1 confirmed: high\n"}},
		{hat: "triager", topic: "triage.done"},
		{hat: "reporter", topic: "LOOP_COMPLETE", write: map[string]string{
			"TRIAGE.md": triageDoc}},
	},
	"merge-conflict": {
		{hat: "analyst", topic: "conflict.file"},
		{hat: "resolver", topic: "conflict.file"},
		{hat: "resolver", topic: "merge.resolved"},
		{hat: "verifier", topic: "LOOP_COMPLETE"},
	},
	"pr-review": {
		{hat: "reader", topic: "pr.area", write: map[string]string{".ralph/agent/pr-intent.md": "Adds a greeting.\n"}},
		{hat: "reviewer", topic: "pr.reviewed"},
		{hat: "writer", topic: "LOOP_COMPLETE", write: map[string]string{
			"PR-REVIEW.md": "Verdict: approve\n\nDoes what it says.\n\n## Comments\n\n- main.go:3 nit: name\n"}},
	},
	"security": {
		{hat: "modeller", topic: "security.surface", write: map[string]string{"security/threat-model.md": "Assets: the tokens.\n"}},
		{hat: "auditor", topic: "security.surface"},
		{hat: "auditor", topic: "security.audited", write: map[string]string{"security/notes.md": "## Findings\n\nnone\n"}},
		{hat: "reporter", topic: "LOOP_COMPLETE", write: map[string]string{
			"SECURITY-REVIEW.md": "Low risk.\n\n## Threat model\n\nTokens.\n\n## Findings\n\nNone.\n"}},
	},
	"qa": {
		{hat: "planner", topic: "qa.charter"},
		{hat: "explorer", topic: "qa.charter", write: map[string]string{"qa/sessions.md": "## import, bad CSV\n"}},
		{hat: "explorer", topic: "qa.explored"},
		{hat: "reporter", topic: "LOOP_COMPLETE", write: map[string]string{
			"QA.md": qaDoc}},
	},
	"wave-review": {
		{hat: "dispatcher", topic: "review.perspective", wave: 3},
		{hat: "reviewer", topic: "review.done", workers: 3},
		{hat: "synthesizer", topic: "LOOP_COMPLETE", write: map[string]string{
			"REVIEW.md": "Approve with changes.\n\n## Findings\n\n- minor: main.go:3 has no test\n"}},
	},
}

// qaDoc and triageDoc are reports as the qa and triage presets tell their
// reporters to write them: findings as task boxes, with what a fix must
// make true as nested boxes.
const (
	qaDoc = "Import is fragile.\n\n## Findings\n\n- [ ] major: import drops quoted newlines\n" +
		"  Steps: import testdata/quoted.csv; 11 rows of 12.\n  - [ ] importing testdata/quoted.csv keeps all 12 rows\n" +
		"- [ ] minor: --help misspells delimiter\n\n## Explored\n\n- import with malformed CSV: clear errors\n"
	triageDoc = "## Confirmed\n\n- [ ] high: export drops the last row (#1)\n  - [ ] a regression test reproduces it\n\n" +
		"## Not confirmed\n\n- #2: duplicate of #1\n"
)

// specDoc is a SPEC.md with the sections the spec preset's gate checks.
const specDoc = "## Requirements\n\nR1: greet.\n\n## Acceptance criteria\n\n- Given Ann, When greeting, Then Hello, Ann\n\n## Out of scope\n\nLocales.\n"

// A run of every preset, written by ralph init and driven by a scripted
// agent along its happy path, reaches completion with every hat having
// run, its gates and acceptance criteria passing on the way.
func TestPresetsHappyPath(t *testing.T) {
	t.Parallel()
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
		payload := h.payload
		if payload == "" {
			payload = fmt.Sprintf("step %d of the happy path", i+1)
		}
		st := emitStep(h.topic, payload)
		if h.topic == "LOOP_COMPLETE" {
			st = say("All done and verified. " + tag(h.topic, payload))
		}
		if h.write != nil {
			st.Write = h.write
		}
		st.Commit = h.commit
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
	t.Parallel()
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
	t.Parallel()
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

// merge-conflict's gate holds merge.resolved back while a real merge still
// has conflict markers and is not concluded: the resolver sees the markers
// and goes on; once it commits the resolution, the merge is done.
func TestMergeConflictGateHoldsUnresolvedMerge(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("Makefile", "test:\n\t@echo ok\n")
	w.write("greet.txt", "Hello\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "base")
	git(t, w.dir, "checkout", "-q", "-b", "theirs")
	w.write("greet.txt", "Hello, world\n")
	git(t, w.dir, "commit", "-q", "-am", "theirs: greet the world")
	git(t, w.dir, "checkout", "-q", "-")
	w.write("greet.txt", "Hello!\n")
	git(t, w.dir, "commit", "-q", "-am", "ours: greet loudly")
	_, err := gittest.Output(w.dir, "merge", "theirs")
	require.Error(t, err, "the merge stops at the conflict")
	require.Equal(t, 0, w.ralph("init", "--preset", "merge-conflict").code)
	w.write("agent.yml", "event_loop:\n  completion_confirmations: 1\n  max_iterations: 20\n"+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"analyst": {emitStep("conflict.file", "greet.txt")},
		"resolver": {
			emitStep("merge.resolved", "resolved, I think"),
			{Write: map[string]string{"greet.txt": "Hello, world!\n"}, Commit: "Merge branch 'theirs': greet the world, loudly",
				Emit: []scriptEmit{{Topic: "merge.resolved", Payload: "committed"}}},
		},
		"verifier": {say(tag("LOOP_COMPLETE", "both greetings kept"))},
	}})

	r := w.ralph("loop", "-c", "ralph.yml", "-c", "agent.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{
		"agent conflict.file", "finished analyst success",
		"agent merge.resolved", "finished resolver success", "ralph merge.resolved.blocked",
		"agent merge.resolved", "finished resolver success",
		"tag LOOP_COMPLETE", "finished verifier success",
	}, agentFlow(w.flow()))
	blocked := w.prompt(3)
	assert.Contains(t, blocked, "unmerged paths (git add each once resolved):\ngreet.txt", "the resolver sees what is left")
	assert.Contains(t, blocked, "greet.txt:1:<<<<<<< HEAD")
	assert.Contains(t, blocked, "MERGE_HEAD exists")
	parents := strings.Fields(git(t, w.dir, "log", "-1", "--format=%P"))
	assert.Len(t, parents, 2, "the merge is concluded")
}

// spec's gate sends a draft without its sections back to the drafter
// before the critic spends a turn on it.
func TestSpecGateNeedsSections(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	require.Equal(t, 0, w.ralph("init", "--preset", "spec").code)
	w.write("agent.yml", "event_loop:\n  completion_confirmations: 1\n  max_iterations: 20\n"+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{
		"drafter": {
			{Write: map[string]string{"SPEC.md": "## Requirements\n\nR1: greet.\n"}, Emit: []scriptEmit{{Topic: "spec.draft", Payload: "R1"}}},
			{Write: map[string]string{"SPEC.md": specDoc}, Emit: []scriptEmit{{Topic: "spec.draft", Payload: "R1"}}},
		},
		"critic": {say(tag("LOOP_COMPLETE", "R1, testable"))},
	}})

	r := w.ralph("loop", "-c", "ralph.yml", "-c", "agent.yml")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{
		"agent spec.draft", "finished drafter success", "ralph spec.draft.blocked",
		"agent spec.draft", "finished drafter success",
		"tag LOOP_COMPLETE", "finished critic success",
	}, agentFlow(w.flow()))
	assert.Contains(t, w.prompt(2), `SPEC.md does not contain "## Acceptance criteria"`, "the drafter is told which section is missing")
}

// The findings qa and triage write are tasks for the autopilot, with the
// command line their headers give.
func TestFindingsFeedTheAutopilot(t *testing.T) {
	t.Parallel()
	for preset, report := range map[string]string{"qa": qaDoc, "triage": triageDoc} {
		t.Run(preset, func(t *testing.T) {
			t.Parallel()
			p, _ := examples.Lookup(preset)
			var args []string
			for line := range strings.Lines(string(p.Data)) {
				if cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "#   ralph autopilot "); ok {
					args = strings.Fields(cmd)
				}
			}
			require.NotEmpty(t, args, "the header shows how to fix the findings")
			w := newWorkspace(t)
			require.Equal(t, 0, w.ralph("init").code)
			name := map[string]string{"qa": "QA.md", "triage": "TRIAGE.md"}[preset]
			w.write(name, report)
			git(t, w.dir, "add", "-A")
			git(t, w.dir, "commit", "-q", "-m", preset+" report")

			r := w.ralph(append([]string{"autopilot"}, append(args, "--dry-run", "--json")...)...)

			require.Equal(t, 0, r.code, r.stderr)
			var plan struct {
				Tasks []struct {
					Task struct {
						Title    string `json:"title"`
						Criteria []struct {
							Text string `json:"text"`
						} `json:"criteria"`
					} `json:"task"`
				} `json:"tasks"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &plan), r.stdout)
			var titles []string
			for _, task := range plan.Tasks {
				titles = append(titles, task.Task.Title)
			}
			want := map[string][]string{
				"qa":     {"major: import drops quoted newlines", "minor: --help misspells delimiter"},
				"triage": {"high: export drops the last row (#1)"},
			}[preset]
			assert.Equal(t, want, titles, "one task per finding, none for what needs no fix")
			require.NotEmpty(t, plan.Tasks)
			assert.NotEmpty(t, plan.Tasks[0].Task.Criteria, "what a fix must make true")
		})
	}
}
