package view

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// One of a thing is singular everywhere ralph counts: "1 iteration", not
// "1 iterations".
func TestTextReporterSaysOneInTheSingular(t *testing.T) {
	var out bytes.Buffer
	now := stepClock()
	m := NewModel(now)
	r := Tee(m, NewText(&out, m, now, Options{Verbose: true}))
	it := testIteration(1, "builder")
	r.IterationFinished(it, events.AgentResult{Duration: time.Second, Usage: events.Usage{OutputTokens: 1},
		Tools: events.ToolCounts{Read: 1, Write: 1}})
	r.Stuck(runfiles.Termination{Reason: runfiles.ReasonStuck, Message: "no progress"}, 1)
	r.LoopFinished(engine.Summary{RunID: "r", Reason: runfiles.ReasonMaxIterations, ExitCode: 2, Iterations: 1,
		Usage: events.Usage{OutputTokens: 1}})

	got := out.String()
	assert.Contains(t, got, "; 1 token, $0.0000; 1 read, 1 write, 0 shell")
	assert.Contains(t, got, "stuck after 1 iteration without progress")
	assert.Contains(t, got, ". 1 iteration in 0s, 1 token, $0.0000")
	assert.NotRegexp(t, `\b1 (iterations|tokens|reads|writes)\b`, got)
}
