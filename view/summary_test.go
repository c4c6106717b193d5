package view

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// The engine says how a run ended; the end's message adds what to type
// next: the resume that raises the limit that ended it, in the run's mode.
func TestEndMessageSaysHowToGoOn(t *testing.T) {
	loop := func(raise string) *runfiles.GoOn { return &runfiles.GoOn{Mode: runfiles.ModeLoop, Raise: raise} }
	cases := []struct {
		end  runfiles.Termination
		want string
	}{
		{runfiles.Termination{Reason: runfiles.ReasonMaxIterations, Message: "reached max_iterations (2)", GoOn: loop("4")},
			"reached max_iterations (2); to go on, raise it on the resume: `ralph loop --resume --max-iterations 4`"},
		{runfiles.Termination{Reason: runfiles.ReasonMaxIterations, Message: "reached max_iterations (1)",
			GoOn: &runfiles.GoOn{Mode: runfiles.ModeSpec, Raise: "2"}},
			"reached max_iterations (1); to go on, raise it on the resume: `ralph run --resume -n 2`"},
		{runfiles.Termination{Reason: runfiles.ReasonStuck, Message: "3 iterations in a row made no progress", GoOn: loop("6")},
			"3 iterations in a row made no progress; to go on, raise it on the resume: `ralph loop --resume --stuck-threshold 6`"},
		{runfiles.Termination{Reason: runfiles.ReasonMaxRuntime, Message: "reached max_runtime_seconds (2m30s)", GoOn: loop("5m")},
			"reached max_runtime_seconds (2m30s); to go on, raise it on the resume: `ralph loop --resume --max-runtime 5m`"},
		{runfiles.Termination{Reason: runfiles.ReasonMaxCost, Message: "spent $1.2000 of max_cost_usd $1.00", GoOn: loop("")},
			"spent $1.2000 of max_cost_usd $1.00; to go on, raise event_loop.max_cost_usd in the config (0: no limit), then `ralph loop --resume`"},
		{runfiles.Termination{Reason: runfiles.ReasonBudgetExhausted, Message: "used 10 of max_tokens 5",
			GoOn: &runfiles.GoOn{Mode: runfiles.ModeSpec}},
			"used 10 of max_tokens 5; to go on, raise event_loop.max_tokens in the config (0: no limit), then `ralph run --resume`"},
		{runfiles.Termination{Reason: runfiles.ReasonFatal, Cause: runfiles.CauseLostDir, Message: ".ralph/ was deleted; ralph stopped"},
			".ralph/ was deleted; ralph stopped; continue with `ralph loop --resume`"},
		{runfiles.Termination{Reason: runfiles.ReasonStopped, Cause: runfiles.CauseStopRequest, Message: "a stop request asked the loop to stop"},
			"a stop request asked the loop to stop"},
		// A log written before the engine recorded how to go on keeps its
		// message as it was.
		{runfiles.Termination{Reason: runfiles.ReasonMaxIterations, Message: "reached max_iterations (2); to go on, …"},
			"reached max_iterations (2); to go on, …"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, EndMessage(tc.end))
	}
}

func TestSummaryParagraph(t *testing.T) {
	sum := engine.Summary{RunID: "r1", Reason: runfiles.ReasonMaxIterations, ExitCode: 2,
		Message: "reached max_iterations (2)", GoOn: &runfiles.GoOn{Mode: runfiles.ModeLoop, Raise: "4"},
		Iterations: 3, Confirmations: 1, Runtime: 61 * time.Second, Cost: runfiles.CostTotal{USD: 0.5},
		Usage: events.Usage{InputTokens: 100, OutputTokens: 20}, Activations: map[string]int{"reviewer": 1, "builder": 2},
		Accepted: 4, Rejected: 1, Malformed: 2, Commits: 1, EventsFile: ".ralph/events.jsonl"}
	assert.Equal(t, "ralph: run r1 ended: max_iterations (exit 2) — reached max_iterations (2); to go on, raise it on the resume: "+
		"`ralph loop --resume --max-iterations 4`. 3 iterations (1 confirming a completion claim, not counted against max_iterations) "+
		"in 1m1s, 120 tokens, $0.5000; hats: builder×2, reviewer×1; events accepted 4, rejected 1; commits 1, malformed lines 2. "+
		"Inspect with `ralph events` (log: .ralph/events.jsonl).", SummaryParagraph(sum), "no advice that would end the run again")

	stopped := engine.Summary{RunID: "r2", Reason: runfiles.ReasonStopped, ExitCode: 1, Cause: runfiles.CauseStopNow,
		Message: "a stop --now request interrupted the running iteration", EventsFile: ".ralph/events.jsonl"}
	assert.Equal(t, "ralph: run r2 ended: stopped (exit 1) — a stop --now request interrupted the running iteration. "+
		"0 iterations in 0s, 0 tokens, $0.0000; events accepted 0, rejected 0; commits 0. "+
		"Resume with `ralph loop --resume`; inspect with `ralph events` (log: .ralph/events.jsonl).", SummaryParagraph(stopped))

	done := engine.Summary{RunID: "r3", Reason: runfiles.ReasonCompleted, Iterations: 1, EventsFile: "e.jsonl"}
	assert.Contains(t, SummaryParagraph(done), "ended: completed (exit 0). 1 iteration")
	assert.NotContains(t, SummaryParagraph(done), "Resume")
}

func TestSummaryMarkdown(t *testing.T) {
	sum := engine.Summary{RunID: "r1", Reason: runfiles.ReasonFatal, ExitCode: 3, Cause: runfiles.CauseLostDir,
		Message: ".ralph/ was deleted | gone", Iterations: 2, Runtime: time.Second, Activations: map[string]int{"ralph": 1},
		Usage: events.Usage{InputTokens: 5, OutputTokens: 6}, EventsFile: ".ralph/events.jsonl"}
	assert.Equal(t, "# ralph run r1\n\n| | |\n|---|---|\n| reason | fatal |\n| exit code | 3 |\n"+
		"| why | .ralph/ was deleted \\| gone; continue with `ralph loop --resume` |\n"+
		"| iterations | 2 |\n| runtime | 1s |\n| tokens | 5 in, 6 out |\n| cost | $0.0000 |\n"+
		"| hat activations | ralph×1 |\n| events | 0 accepted, 0 rejected, 0 malformed |\n| commits | 0 |\n"+
		"| event log | `.ralph/events.jsonl` |\n\nInspect: `ralph events` · resume: `ralph loop --resume`\n", SummaryMarkdown(sum))

	stuck := engine.Summary{RunID: "r2", Reason: runfiles.ReasonStuck, ExitCode: 1, Message: "no progress",
		GoOn: &runfiles.GoOn{Mode: runfiles.ModeLoop, Raise: "6"}}
	assert.Contains(t, SummaryMarkdown(stuck), "| why | no progress; to go on, raise it on the resume: `ralph loop --resume --stuck-threshold 6` |")
	assert.Contains(t, SummaryMarkdown(stuck), "Inspect: `ralph events`\n", "no advice that would end the run again")
}

// `ralph events` shows a loop.terminate line with the advice its summary
// gave.
func TestDescribeTerminateSaysHowToGoOn(t *testing.T) {
	ev := events.Event{Topic: runfiles.TopicLoopTerminate, Source: events.SourceRalph, Payload: json.RawMessage(
		`{"reason":"max_iterations","exit_code":2,"message":"reached max_iterations (2)","go_on":{"mode":"spec","raise":"4"},` +
			`"iterations":2,"cost_usd":0.5,"tokens":1200,"runtime_ms":61000}`)}
	assert.Equal(t, "max_iterations (exit 2) · 2 iterations · 1m01s · 1.2k tok · $0.5000 · reached max_iterations (2); "+
		"to go on, raise it on the resume: `ralph run --resume -n 4`", describe(ev))
}
