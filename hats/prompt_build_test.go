package hats

import (
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

func TestBuildPromptKeepsLongPayloadWhole(t *testing.T) {
	payload := strings.Repeat("line of build output\n", 5000) + "THE END"
	r := newTestRegistry(t, testHats())
	out := BuildPrompt(promptFor(t, r, "reviewer", logEvent("build.done", "builder", payload)))
	assert.Contains(t, out, payload)
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
