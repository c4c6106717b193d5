package hats

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
)

const (
	testObjective = "Add a `--json` flag to `todo list` that prints the todos as a JSON array.\nKeep the text output unchanged."
	testEmit      = "/opt/ralph/bin/ralph"
)

// promptFor builds the input the engine would: the hat from the registry, its
// routes, and the fixed parts.
func promptFor(t *testing.T, r *Registry, hatID string, evs ...events.Event) PromptInput {
	t.Helper()
	h, ok := r.Get(hatID)
	require.True(t, ok, hatID)
	return PromptInput{
		Objective:       testObjective,
		Hat:             h,
		Events:          evs,
		Routes:          r.Routes(h),
		CompletionTopic: "LOOP_COMPLETE",
		EmitCommand:     testEmit,
		Iteration:       1,
		ScratchpadPath:  ".ralph/agent/scratchpad.md",
	}
}

func logEvent(topic, hat, payload string) events.Event {
	e := events.Event{TS: t0, Topic: topic, Hat: hat, Source: events.SourceAgent, Payload: events.StringPayload(payload)}
	if hat == "" {
		e.Source = events.SourceRalph
	}
	return e
}

func TestBuildPromptGolden(t *testing.T) {
	r := newTestRegistry(t, append(testHats(),
		Hat{ID: "scout", Name: "Scout", Triggers: []string{"research.*"},
			Instructions: "Find out what the question asks and report back."}))

	fencedPayload := "Tests fail:\n\n```\n--- FAIL: TestListJSON\n    want `[]`, got `null`\n```\n\nAlso a 4-tick run: ````"
	objectPayload := events.Event{TS: t0, Topic: "plan.ready", Hat: "planner", Source: events.SourceTag,
		Payload: []byte(`{"step":2,"files":["cmd/list.go"]}`)}

	tests := map[string]PromptInput{
		"builder_first_iteration": promptFor(t, r, "builder",
			logEvent("plan.ready", "planner", "Step 1: add the flag in cmd/list.go and a test in cmd/list_test.go."),
			objectPayload),
		"coordinator_task_start": promptFor(t, r, CoordinatorID,
			logEvent("task.start", "", testObjective)),
		"fenced_payload": promptFor(t, r, "builder",
			logEvent("review.rejected", "reviewer", fencedPayload)),
		"last_iteration": func() PromptInput {
			in := promptFor(t, r, "reviewer", logEvent("build.done", "builder", "tests: pass (go test ./... ok)"))
			in.Iteration = 4
			in.LastIteration = "The event build.done was blocked: criterion tests_pass failed.\n\n    --- FAIL: TestListJSON (0.00s)\n\nFix the failing test before publishing build.done again."
			return in
		}(),
		"confirming": func() PromptInput {
			in := promptFor(t, r, CoordinatorID)
			in.Confirming = true
			in.Claim = "Added --json to todo list; go test ./... passes; README documents the flag."
			in.Scratchpad = "- [x] flag\n- [x] tests\n- [x] README"
			return in
		}(),
		"no_publishes": promptFor(t, r, "scout",
			logEvent("research.question", "builder", "Which JSON library does the repo already use?")),
		"scratchpad_memories": func() PromptInput {
			in := promptFor(t, r, "planner", logEvent("task.start", "", testObjective))
			in.Scratchpad = "# Plan\n\n- [ ] add flag\n- [ ] add test"
			in.Memories = "- This repo formats with `gofumpt`.\n- `make test` runs the race detector."
			return in
		}(),
		"no_events_emit_path_with_space": func() PromptInput {
			in := promptFor(t, r, CoordinatorID)
			in.EmitCommand = "/Users/me/My Tools/ralph"
			in.ScratchpadPath = "notes/scratch.md"
			return in
		}(),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			golden.Assert(t, filepath.Join("testdata", "prompts", name+".golden"), BuildPrompt(in))
		})
	}
}

func TestBuildPromptSectionOrder(t *testing.T) {
	r := newTestRegistry(t, testHats())
	in := promptFor(t, r, "builder", logEvent("plan.ready", "planner", "step 1"))
	in.LastIteration, in.Scratchpad, in.Memories = "x", "y", "z"

	var headings []string
	for line := range strings.Lines(BuildPrompt(in)) {
		if strings.HasPrefix(line, "# ") {
			headings = append(headings, strings.TrimSpace(line))
		}
	}
	assert.Equal(t, []string{
		"# Objective", "# Your role: Builder", "# Events to handle", "# Instructions",
		"# What happened last iteration", "# Scratchpad", "# Memories", "# Publishing",
	}, headings)
}

// testLog is a test log of about size bytes whose first, middle and last
// lines hold the marks HEAD-MARK, MIDDLE-MARK and TAIL-MARK.
func testLog(size int) string {
	var b strings.Builder
	b.WriteString("HEAD-MARK go test ./...\n")
	for i := 0; b.Len() < size; i++ {
		if b.Len() >= size/2 && b.Len() < size/2+40 {
			b.WriteString("MIDDLE-MARK\n")
		}
		fmt.Fprintf(&b, "=== RUN   TestCase%05d\n--- PASS: TestCase%05d (0.00s)\n", i, i)
	}
	b.WriteString("FAIL TAIL-MARK\n")
	return b.String()
}

func TestBuildPromptCutsALongPayload(t *testing.T) {
	payload := testLog(150_000)
	r := newTestRegistry(t, testHats())
	in := promptFor(t, r, "reviewer", logEvent("build.done", "builder", "tests ran"), logEvent("test.log", "builder", payload))
	in.EventOffsets = []int64{1200, 4821}
	out := BuildPrompt(in)

	assert.Contains(t, out, "HEAD-MARK")
	assert.Contains(t, out, "TAIL-MARK", "the end of a log is where it says what failed")
	assert.NotContains(t, out, "MIDDLE-MARK")
	assert.Contains(t, out, fmt.Sprintf("This payload is %s, too long to show whole: only its beginning and end are here. `%s events --offset 4821 --payload` prints all of it.",
		byteCount(len(payload)), testEmit))
	assert.Contains(t, out, "left out here …]")
	assert.Contains(t, out, "```text\ntests ran\n```", "a short payload beside it is whole")
	assert.Less(t, len(out), payloadLimit+8<<10)
}

func TestBuildPromptLongPayloadGolden(t *testing.T) {
	r := newTestRegistry(t, testHats())
	in := promptFor(t, r, "reviewer", logEvent("test.log", "builder", testLog(40_000)))
	in.EventOffsets = []int64{4821}
	golden.Assert(t, filepath.Join("testdata", "prompts", "long_payload.golden"), BuildPrompt(in))
}

// TestBuildPromptWithoutOffsetsNamesTheTopic: a caller that does not know
// where the events are in the log still gets a command that prints them.
func TestBuildPromptWithoutOffsetsNamesTheTopic(t *testing.T) {
	r := newTestRegistry(t, testHats())
	out := BuildPrompt(promptFor(t, r, "reviewer", logEvent("build.done", "builder", testLog(100_000))))
	assert.Contains(t, out, "`"+testEmit+" events --topic build.done --payload` prints all of it.")
}

// TestBuildPromptSharesThePayloadBudget: many long payloads share one
// budget, each keeping its beginning and end.
func TestBuildPromptSharesThePayloadBudget(t *testing.T) {
	r := newTestRegistry(t, testHats())
	var evs []events.Event
	for range 10 {
		evs = append(evs, logEvent("build.done", "builder", testLog(20_000)))
	}
	out := BuildPrompt(promptFor(t, r, "reviewer", evs...))
	assert.Equal(t, 10, strings.Count(out, "HEAD-MARK"))
	assert.Equal(t, 10, strings.Count(out, "TAIL-MARK"))
	assert.Equal(t, 10, strings.Count(out, "too long to show whole"))
	assert.Less(t, len(out), payloadsBudget+12<<10)
}

func TestBuildPromptCutsALongObjectiveClaimAndNote(t *testing.T) {
	r := newTestRegistry(t, testHats())
	in := promptFor(t, r, CoordinatorID)
	in.Objective = testLog(120_000)
	in.LastIteration = testLog(30_000)
	out := BuildPrompt(in)
	assert.Contains(t, out, "The objective is "+byteCount(len(in.Objective))+", too long to show whole")
	assert.Contains(t, out, "`"+testEmit+" status --objective` prints all of it.")
	assert.Contains(t, out, "`"+testEmit+" events --topic iteration.settled --last 1 --payload` prints all of it.")
	assert.NotContains(t, out, "MIDDLE-MARK")
	assert.Equal(t, 2, strings.Count(out, "TAIL-MARK"))

	in.Confirming, in.Claim = true, testLog(60_000)
	out = BuildPrompt(in)
	assert.Contains(t, out, "The claim is "+byteCount(len(in.Claim))+", too long to show whole")
	assert.Contains(t, out, "`"+testEmit+" events --topic LOOP_COMPLETE --last 1 --payload` prints all of it.")
	assert.NotContains(t, out, "MIDDLE-MARK")
}

// TestBuildPromptStaysUnderTheArgumentLimit: whatever the objective, the
// events, the note, and the scratchpad and memories the engine cuts to
// their own limits, the prompt fits in one command-line argument (100 KiB,
// backends' maxArgPrompt), as prompt_limits.go promises.
func TestBuildPromptStaysUnderTheArgumentLimit(t *testing.T) {
	r := newTestRegistry(t, testHats())
	in := promptFor(t, r, "reviewer",
		logEvent("build.done", "builder", testLog(150_000)),
		logEvent("build.done", "builder", testLog(150_000)),
		logEvent("build.done", "builder", testLog(150_000)))
	in.Objective = testLog(500_000)
	in.LastIteration = testLog(100_000)
	in.Scratchpad = strings.Repeat("s", 16<<10)
	in.Memories = strings.Repeat("m", 4000)
	assert.Less(t, len(BuildPrompt(in)), 100<<10)
}

func TestByteCount(t *testing.T) {
	for n, want := range map[int]string{1: "1 byte", 999: "999 bytes", 1000: "1,000 bytes", 153600: "153,600 bytes", 12345678: "12,345,678 bytes"} {
		assert.Equal(t, want, byteCount(n))
	}
}

func TestFenced(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "a", "```text\na\n```\n"},
		{"triple backticks inside", "```\nx\n```", "````text\n```\nx\n```\n````\n"},
		{"longest run counts", "`` and `````", "``````text\n`` and `````\n``````\n"},
		{"trailing newlines dropped", "a\n\n", "```text\na\n```\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fenced(tt.in, "text"))
		})
	}
}
